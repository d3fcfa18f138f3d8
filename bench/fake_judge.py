"""A stand-in OpenAI-compatible judge for the benchmark: answers every chat completion after a fixed delay.

Its answer is a passing rubric grade in JSON, so a judge grader configured against it grades normally;
only its latency matters here.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = json.dumps({"rationale": "the agent answered the request", "score": 0.9})


class FakeJudge:
    """`with FakeJudge(delay=2.0) as judge:` serves `judge.base_url` (…/v1) on 127.0.0.1 until the block ends."""

    def __init__(self, delay: float = 2.0) -> None:
        self.delay = delay
        self.requests = 0
        self._lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with judge._lock:
                    judge.requests += 1
                time.sleep(judge.delay)
                body = json.dumps(
                    {
                        "id": "chatcmpl-bench",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": "bench-judge",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": ANSWER},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
                    }
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (timeout, shutdown): nothing to answer
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-judge", daemon=True)

    def __enter__(self) -> FakeJudge:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
