"""The loop's alarm: it rings at the earliest deadline it was told of, from the loop or another thread, or after
the longest wait, and never wakes the loop for a deadline later than the one armed."""

from __future__ import annotations

import asyncio
import threading
import time

from otelgrade.service.alarm import Alarm


def _rings_after(alarm_setup: str) -> float:
    """Seconds until `Alarm.wait(5.0)` returns, with deadlines told as `alarm_setup` says."""

    async def main() -> float:
        loop = asyncio.get_running_loop()
        alarm = Alarm(loop, time.monotonic)
        began = time.monotonic()
        if alarm_setup == "earlier":  # a late deadline armed first, then an earlier one
            alarm.at(began + 3.0)
            alarm.at(began + 0.2)
            alarm.at(began + 1.0)  # later than what is armed: changes nothing
        elif alarm_setup == "thread":
            threading.Timer(0.1, alarm.at, args=(began + 0.2,)).start()
        await alarm.wait(5.0)
        return time.monotonic() - began

    return asyncio.run(main())


def test_the_alarm_rings_at_the_earliest_deadline_told() -> None:
    assert 0.2 <= _rings_after("earlier") < 0.9


def test_a_deadline_told_from_another_thread_wakes_the_loop_by_then() -> None:
    assert 0.2 <= _rings_after("thread") < 0.9


def test_without_deadlines_the_alarm_rings_after_the_longest_wait() -> None:
    async def main() -> float:
        alarm = Alarm(asyncio.get_running_loop(), time.monotonic)
        began = time.monotonic()
        await alarm.wait(0.3)
        alarm.at(None)  # nothing due
        return time.monotonic() - began

    assert 0.3 <= asyncio.run(main()) < 1.0


def test_the_alarm_rings_no_more_often_than_its_shortest_wait() -> None:
    async def main() -> list[float]:
        alarm = Alarm(asyncio.get_running_loop(), time.monotonic, shortest=0.2)
        began = time.monotonic()
        rang = []
        for _ in range(3):
            alarm.at(float("-inf"))  # already due, three times in a row
            await alarm.wait(5.0)
            rang.append(time.monotonic() - began)
        return rang

    rang = asyncio.run(main())
    gaps = [b - a for a, b in zip([0.0, *rang], rang, strict=False)]
    assert all(gap >= 0.2 for gap in gaps), gaps
