"""Gather a run's grades into one notice: its code graders' grades come at once, its judges' later.

A run's `GradedRun` is handed on when its last grade is in, or when `wait` seconds (the judge's timeout) have passed
since its code graders answered, whichever comes first: then it lists the grades in so far and which are still
awaited, and the grades that arrive after that come in a second notice (`part` 2) once they are all in. The
per-run log line and the webhook sink read these notices; the metrics and the other sinks take each grade as it
comes.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from otelgrade.core.results import Grade
from otelgrade.core.trajectory import Trajectory


@dataclass(frozen=True)
class GradedRun:
    """One run's grades, as a person would want them together.

    `part` 1 holds every grade of the run that was in by the deadline and names in `waiting` (`suite/grader`) those
    that were not; `part` 2 holds those late grades, once they are all in."""

    trajectory: Trajectory
    grades: tuple[Grade, ...]
    waiting: tuple[str, ...] = ()
    part: int = 1

    @property
    def revision(self) -> int:
        """The run's grading round: 2 and up when a suite graded it again after late spans."""
        return max((g.revision for g in self.grades), default=1)

    @property
    def key(self) -> str:
        """The same for the same notice on every replica and after a restart (an idempotency key)."""
        t = self.trajectory
        return f"{t.trace_id}-{t.span_id}-r{self.revision}-p{self.part}"


@dataclass(eq=False)
class _Open:
    """A run some of whose grades are still awaited."""

    trajectory: Trajectory | None  # let go once every grade is in (the entry waits in the heap for its deadline)
    grades: list[Grade]
    waiting: list[str]
    remaining: int
    late: list[Grade] = field(default_factory=list)
    handed: bool = False  # part 1 has been handed on


Deliver = Callable[[GradedRun], None]


class Gathering:
    """Thread-safe: `add` from the grading thread, answers from the judges' loop, `expire` from the server's tick."""

    def __init__(self, deliver: Deliver, wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.deliver, self.wait, self.clock = deliver, wait, clock
        self._lock = threading.Lock()
        self._deadlines: list[tuple[float, int, _Open]] = []  # one heap for every open run
        self._order = itertools.count()

    def add(
        self, trajectory: Trajectory, ready: Sequence[Grade], pending: Sequence[Future[Grade]], names: Sequence[str]
    ) -> None:
        """A run's grades: `ready` now, `pending` later (`names` says whose, `suite/grader`, in the same order)."""
        if not pending:
            self.deliver(GradedRun(trajectory, tuple(ready)))
            return
        run = _Open(trajectory, list(ready), list(names), len(pending))
        with self._lock:
            heapq.heappush(self._deadlines, (self.clock() + self.wait, next(self._order), run))
        for future, name in zip(pending, names, strict=True):
            future.add_done_callback(functools.partial(self._arrived, run, name))

    def _arrived(self, run: _Open, name: str, done: Future[Grade]) -> None:
        # grading records every answer, a judge's error included: a future that failed has nothing to hand on
        grade = None if done.cancelled() or done.exception() is not None else done.result()
        notice = None
        with self._lock:
            trajectory = run.trajectory
            assert trajectory is not None  # only let go once nothing is awaited
            run.remaining -= 1
            if not run.handed:
                if grade is not None:
                    run.grades.append(grade)
                run.waiting.remove(name)
                if not run.remaining:
                    run.handed = True
                    notice = GradedRun(trajectory, tuple(run.grades))
            else:
                if grade is not None:
                    run.late.append(grade)
                if not run.remaining and run.late:
                    notice = GradedRun(trajectory, tuple(run.late), part=2)
            if not run.remaining:
                run.trajectory, run.grades, run.late = None, [], []
        if notice is not None:
            self.deliver(notice)

    def expire(self, now: float | None = None) -> None:
        """Hand on every run whose deadline has passed (all of them with `now` = inf, at shutdown) with the grades
        in so far; drops runs already handed on from the heap."""
        now = self.clock() if now is None else now
        notices = []
        with self._lock:
            while self._deadlines and self._deadlines[0][0] <= now:
                _, _, run = heapq.heappop(self._deadlines)
                if not run.handed and run.trajectory is not None:
                    run.handed = True
                    notices.append(GradedRun(run.trajectory, tuple(run.grades), tuple(run.waiting)))
        for notice in notices:
            self.deliver(notice)

    def next_deadline(self) -> float | None:
        """When `expire` may next have a run to hand on (None: no run is open)."""
        with self._lock:
            return self._deadlines[0][0] if self._deadlines else None

    @property
    def open_runs(self) -> int:
        """Runs waiting for a grade, or handed on and not yet due to leave the heap."""
        return len(self._deadlines)
