"""One HTTP POST bounded like a request the receivers take: connect, send and answer within one deadline (not one
per read, which an endpoint dripping its answer renews for ever), at most `MAX_ANSWER_BYTES` of the answer read and
the connection dropped after it, redirects not followed. Runs on the thread that calls it, on an event loop of its
own; `cancel` ends the request in flight from any thread (shutdown)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass

import httpx2

MAX_ANSWER_BYTES = 16 * 1024  # of an answer's body: enough for an error message, never an endpoint's whole page


@dataclass(frozen=True)
class Answer:
    status: int
    headers: httpx2.Headers
    excerpt: str  # the start of the body (at most MAX_ANSWER_BYTES, as received: undecoded)


class DeliveryTimeout(Exception):
    """The whole request did not finish within its deadline."""


class DeliveryCancelled(Exception):
    """`cancel` ended the request (shutdown)."""


class Poster:
    """Not thread-safe except `cancel`: one thread posts."""

    def __init__(self, headers: dict[str, str]) -> None:
        self._loop = asyncio.new_event_loop()
        # no per-read timeouts: `post` gives the whole request one deadline
        self._client = httpx2.AsyncClient(headers=headers, timeout=None, follow_redirects=False)
        self._lock = threading.Lock()
        self._task: asyncio.Task[Answer] | None = None
        self._cancelled = False

    def post(self, url: str, body: bytes, headers: dict[str, str], seconds: float) -> Answer:
        """POST and read the answer's start within `seconds`; raises `DeliveryTimeout`, `DeliveryCancelled` or
        `httpx2.HTTPError`."""
        with self._lock:
            if self._cancelled:
                raise DeliveryCancelled
            task = self._task = self._loop.create_task(self._post(url, body, headers))
        try:
            return self._loop.run_until_complete(asyncio.wait_for(task, max(0.0, seconds)))
        except TimeoutError:
            raise DeliveryTimeout(f"no whole answer within {seconds:g}s") from None
        except asyncio.CancelledError:
            raise DeliveryCancelled from None
        finally:
            with self._lock:
                self._task = None

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        async with self._client.stream("POST", url, content=body, headers=headers) as response:
            kept = bytearray()
            async for chunk in response.aiter_raw():
                kept += chunk[: MAX_ANSWER_BYTES - len(kept)]
                if len(kept) >= MAX_ANSWER_BYTES:
                    break  # leaving the block closes the connection: the rest is never read
            return Answer(response.status_code, response.headers, kept.decode("utf-8", "replace"))

    def cancel(self) -> None:
        """End the request in flight, and refuse the next ones (from any thread)."""
        with self._lock:
            self._cancelled = True
            task = self._task
        if task is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(task.cancel)

    def close(self) -> None:
        """From the posting thread, once it is done."""
        with contextlib.suppress(Exception):
            self._loop.run_until_complete(self._client.aclose())
        self._loop.close()
