"""The event loop's alarm: wakes the server's periodic work at the earliest deadline it was told of (a trace may
complete, a conversation settles, a judged run is due to be handed on) or after the longest tick, whichever comes
first. Whoever learns of a deadline says so when it learns it, so the loop sleeps between them instead of waking
on a short period to look: an idle process costs next to nothing."""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
from collections.abc import Callable


class Alarm:
    """One timer on the loop, armed at the earliest deadline asked for; `at` may be called from any thread.

    `shortest`: the least time between two wake-ups (deadlines that fall within it are handled together)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: Callable[[], float], shortest: float = 0.0) -> None:
        self._loop = loop
        self._clock = clock
        self._shortest = shortest
        self._thread = threading.get_ident()
        self._at = math.inf  # when the armed timer rings (the clock's time); inf: none is armed
        self._timer: asyncio.TimerHandle | None = None
        self._rung = asyncio.Event()

    def at(self, when: float | None) -> None:
        """Ring by `when` (the clock's time; None: nothing is due). Cheap when an earlier ring is armed."""
        if when is None or when >= self._at:
            return
        if threading.get_ident() == self._thread:
            self._arm(when)
        else:
            with contextlib.suppress(RuntimeError):  # the loop has closed: shutting down
                self._loop.call_soon_threadsafe(self._arm, when)

    def _arm(self, when: float) -> None:
        now = self._clock()
        when = max(when, now + self._shortest)
        if when >= self._at:
            return
        self._at = when
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_later(when - now, self._ring)

    def _ring(self) -> None:
        self._timer, self._at = None, math.inf
        self._rung.set()

    async def wait(self, longest: float) -> None:
        """Until the alarm rings, `longest` seconds at most."""
        self.at(self._clock() + longest)
        await self._rung.wait()
        self._rung.clear()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._at = None, -math.inf  # nothing arms it again
