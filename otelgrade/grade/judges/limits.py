"""Spend and rate limits for judge requests: a token bucket (rpm, tpm) and a budget ledger per period."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from otelgrade.core.settings import Budget


class Pacer:
    """A token bucket for the event loop: `rate` per second, bursting to one second's worth; spend may go negative."""

    def __init__(self, per_minute: float, clock: Callable[[], float]) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self.clock = clock
        self.stamp = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    async def take(self, amount: float = 1.0) -> None:
        while True:
            self._refill()
            if self.level >= 1.0:
                self.level -= amount
                return
            await asyncio.sleep((1.0 - self.level) / self.rate)

    def spend(self, amount: float) -> None:
        self._refill()
        self.level -= amount


class Ledger:
    """Spend per fixed period aligned to the epoch (so replicas' periods coincide); thread-safe."""

    def __init__(self, budget: Budget, wall: Callable[[], float]) -> None:
        self.budget, self.wall = budget, wall
        self.window = -1
        self.tokens, self.usd = 0, 0.0
        self._lock = threading.Lock()

    def _roll(self) -> None:
        window = int(self.wall() // self.budget.period)
        if window != self.window:
            self.window, self.tokens, self.usd = window, 0, 0.0

    def spent(self) -> bool:
        with self._lock:
            self._roll()
            b = self.budget
            return (b.tokens is not None and self.tokens >= b.tokens) or (b.usd is not None and self.usd >= b.usd)

    def record(self, tokens: int, usd: float) -> None:
        with self._lock:
            self._roll()
            self.tokens += tokens
            self.usd += usd
