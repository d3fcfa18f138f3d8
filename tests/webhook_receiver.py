"""A webhook receiver on 127.0.0.1 for the webhook sink's tests: answers each POST with the next scripted status
(then 200), records what it accepted, and can be taken down and brought back on the same port.

    with Receiver() as receiver:
        receiver.script(503, 400)
        ... point the sink at receiver.url ...
        receiver.accepted   # (idempotency key, JSON body, headers) of every POST answered 2xx

Every body is checked against the documented message schema (docs/webhook-message.schema.json); `wait_for`
fails on a body that does not match it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import free_port

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "webhook-message.schema.json").read_text())
jsonschema.validators.validator_for(SCHEMA).check_schema(SCHEMA)
MESSAGE = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
"""Checks a body against the schema; built once (`jsonschema.validate` rebuilds it per call, ~0.1 s each)."""


class Receiver:
    def __init__(self) -> None:
        self.port = free_port()
        self.accepted: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.answered: list[int] = []  # every status answered, in order
        self.invalid: list[str] = []  # why bodies did not match the schema
        self._script: deque[tuple[int, dict[str, str]]] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def script(self, *statuses: int, headers: dict[str, str] | None = None) -> None:
        with self._lock:
            self._script.extend((status, headers or {}) for status in statuses)

    def up(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    MESSAGE.validate(json.loads(body))
                except (ValueError, jsonschema.ValidationError) as exc:
                    receiver.invalid.append(str(exc))
                with receiver._lock:
                    status, headers = receiver._script.popleft() if receiver._script else (200, {})
                    receiver.answered.append(status)
                    if 200 <= status < 300:
                        key = self.headers.get("Idempotency-Key", "")
                        receiver.accepted.append((key, json.loads(body), dict(self.headers.items())))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def down(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=10)
            self._server = None

    def keys(self) -> list[str]:
        with self._lock:
            return [key for key, _, _ in self.accepted]

    def wait_for(self, count: int, timeout: float = 20.0) -> list[str]:
        """The accepted messages' keys once there are `count` of them."""
        deadline = time.monotonic() + timeout
        while len(self.keys()) < count:
            assert not self.invalid, self.invalid[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.keys())} message(s) accepted after {timeout}s, not {count}")
            time.sleep(0.02)
        assert not self.invalid, self.invalid[0]
        return self.keys()

    def __enter__(self) -> Receiver:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()
