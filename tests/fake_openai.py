"""A scriptable OpenAI-compatible chat completions server on 127.0.0.1, for judge tests.

    with FakeOpenAI(default=Reply.grade(0.9)) as fake:
        fake.script(Reply.error(429, headers={"Retry-After": "1"}), Reply.grade(0.2))
        ... point the openai client at fake.base_url ...
        fake.requests          # every request body received, in order

Each request takes the next scripted reply, or the default (a `Reply` or a function of the request body).
The server runs on its own event loop in a background thread, so sync and async tests can both use it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a chat completion (text or a tool call) or an HTTP error, after `delay` seconds."""

    status: int = 200
    content: str | None = None
    tool_calls: tuple[tuple[str, str], ...] = ()
    usage: tuple[int, int] = (100, 20)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    message: str = ""

    @classmethod
    def grade(cls, score: Any, rationale: str = "judged by the fake", **kw: Any) -> Reply:
        return cls(content=json.dumps({"rationale": rationale, "score": score}), **kw)

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any] | str, **kw: Any) -> Reply:
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(tool_calls=((name, args),), **kw)

    @classmethod
    def error(cls, status: int, message: str = "scripted error", **kw: Any) -> Reply:
        return cls(status=status, message=message, **kw)


Responder = Reply | Callable[[dict[str, Any]], Reply]


class FakeOpenAI:
    def __init__(self, default: Responder | None = None) -> None:
        self.default: Responder = default if default is not None else Reply.grade(1.0)
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-openai", daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def start(self) -> FakeOpenAI:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
        asyncio.run_coroutine_threadsafe(self._cancel_pending(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @staticmethod
    async def _cancel_pending() -> None:
        """Requests still held by a scripted delay are cancelled, not left for the loop to destroy."""
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.times.append(time.monotonic())
            if self._script:
                return self._script.popleft()
        return self.default(body) if callable(self.default) else self.default

    async def _completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        reply = self._next(body)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            error = {"error": {"message": reply.message, "type": "fake_error", "code": str(reply.status)}}
            return web.json_response(error, status=reply.status, headers=reply.headers)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        prompt_tokens, completion_tokens = reply.usage
        completion = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return web.json_response(completion, headers=reply.headers)
