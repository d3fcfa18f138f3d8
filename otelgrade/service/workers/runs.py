"""The grades page's runs with grading workers: the receiving process lists every run and its grades (what `/` and
`/api/grades` list and filter), and each run's trajectory stays in the worker that graded it, which sends it up
only when the run's page is opened."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from pydantic import TypeAdapter

from otelgrade.core.trajectory import Trajectory
from otelgrade.export.ui import RunStore
from otelgrade.export.ui.store import Run

FETCH_TIMEOUT_SECONDS = 5.0  # a worker that does not answer by then: its runs are shown without their trajectory

_HELD = TypeAdapter(list[Trajectory])


class Holder(Protocol):
    """A grading worker, as the page asks it for a trace's runs."""

    async def runs_of(self, trace_id: str) -> bytes: ...


def runs_json(runs: Iterable[Run]) -> bytes:
    """The trajectories a worker holds of one trace, as it sends them up (a JSON list)."""
    return b"[" + b",".join(r.trajectory.model_dump_json().encode() for r in runs if r.trajectory is not None) + b"]"


class ListedRuns(RunStore):
    """The receiving process's runs: listed by the ids and grades the workers send as they grade (`list_run`,
    `write`); a trace's trajectories asked of the workers when its page is opened."""

    def __init__(self, keep: int, holders: Callable[[], Sequence[Holder]]) -> None:
        super().__init__(keep)
        self.holders = holders

    async def fetch(self, trace_id: str) -> None:
        if not any(run.trajectory is None for run in self.runs(trace_id)):
            return  # not listed, or every run's trajectory is here already
        answers = await asyncio.gather(
            *(asyncio.wait_for(h.runs_of(trace_id), FETCH_TIMEOUT_SECONDS) for h in self.holders()),
            return_exceptions=True,
        )
        for answer in answers:
            if isinstance(answer, bytes):
                for held in _HELD.validate_json(answer):
                    self.fill(held)
