"""Judge spending limits on a fake clock: a pace per minute, and a budget per period aligned to the epoch."""

from __future__ import annotations

import asyncio

from otelgrade.core.settings import Budget
from otelgrade.grade.judges.limits import Ledger, Pacer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_budget_is_spent_within_its_period_and_renewed_in_the_next() -> None:
    clock = Clock()
    ledger = Ledger(Budget.model_validate({"tokens": 100, "period": "1h"}), clock)
    ledger.record(60, 0.0)
    assert not ledger.spent()
    ledger.record(40, 0.0)
    assert ledger.spent()
    clock.now = 3600.0 * 2  # the next hour of the epoch
    assert not ledger.spent()


def test_a_usd_budget_counts_money() -> None:
    ledger = Ledger(Budget.model_validate({"usd": 1.0, "period": "1d"}), Clock())
    ledger.record(10, 0.99)
    assert not ledger.spent()
    ledger.record(10, 0.02)
    assert ledger.spent()


def test_the_pacer_lets_a_seconds_worth_through_then_waits_for_refill() -> None:
    clock = Clock()
    pacer = Pacer(per_minute=120, clock=clock)  # 2 per second
    asyncio.run(pacer.take())
    asyncio.run(pacer.take())
    assert pacer.level < 1.0
    clock.now += 0.5
    asyncio.run(pacer.take())  # refilled by one
    pacer.spend(5)
    assert pacer.level < 0
