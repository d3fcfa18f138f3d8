"""Grade runs: route each rebuilt run to its suites, call every grader, and hand the grades to export.

One loop serves the live server and the offline CLI. A judge's grade arrives later as a future: live, it is
exported when it resolves; offline, `grade_and_wait` also awaits it. Nothing else differs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from otelgrade.graders import Grader, GraderSpec, grade_safely
from otelgrade.graders.base import is_judge
from otelgrade.judges import DISABLED, JudgeClient
from otelgrade.metrics import Metrics
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialect import Dialect
from otelgrade.results import OUTCOMES, Grade, GradeResult
from otelgrade.route import Predicate, match_filter
from otelgrade.spans import LogEvent, Span
from otelgrade.trajectory import Trajectory

Export = Callable[[Sequence[Grade]], None]


@dataclass(frozen=True)
class SuiteGrader:
    spec: GraderSpec
    grade: Grader


@dataclass(frozen=True)
class Suite:
    """A match predicate and the graders of every run it accepts."""

    name: str
    accepts: Predicate
    graders: tuple[SuiteGrader, ...]

    @classmethod
    def build(
        cls, name: str, match: Mapping[str, Any], specs: Iterable[GraderSpec], judges: JudgeClient = DISABLED
    ) -> Suite:
        return cls(name, match_filter(match), tuple(SuiteGrader(spec, spec.build(judges)) for spec in specs))


class Grading:
    """Grades runs with the installed suites; `install` swaps them (a config reload) without losing anything."""

    def __init__(
        self,
        suites: Sequence[Suite],
        export: Export,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_run: Callable[[Trajectory], None] | None = None,
        dialects: Sequence[Dialect] = (),
    ) -> None:
        self.export = export
        self.on_run = on_run  # sees every run that some suite grades, before its grades are exported
        self.metrics = metrics if metrics is not None else Metrics()
        self.clock, self.wall = clock, wall
        self.suites: tuple[Suite, ...] = ()
        self.dialects: tuple[Dialect, ...] = ()  # the config's span mappings, asked before the built-in conventions
        self.install(suites, dialects)

    def install(self, suites: Sequence[Suite], dialects: Sequence[Dialect] | None = None) -> None:
        """Use these suites (and span mappings; None keeps the current ones) from now on, swapped together on a
        reload. The suites' series start at zero (`rate()` needs a sample before the first grade)."""
        for suite in suites:
            self.metrics.runs_graded.labels(suite.name)
            for g in suite.graders:
                for outcome in OUTCOMES:
                    self.metrics.grades.labels(suite.name, g.spec.name, outcome)
        self.suites = tuple(suites)
        if dialects is not None:
            self.dialects = tuple(dialects)

    def judge_graders(self) -> list[str]:
        """Names of the configured graders that are judges."""
        return [g.spec.name for s in self.suites for g in s.graders if is_judge(g.grade)]

    def route(self, trajectory: Trajectory) -> list[Suite]:
        return [suite for suite in self.suites if suite.accepts(trajectory)]

    def grade(self, trajectory: Trajectory) -> tuple[list[Grade], list[Future[Grade]]]:
        """Every grader of every suite the run matches. Grades that are ready are exported now; the others
        (judges) are exported when their future resolves, and returned for whoever wants to wait."""
        m = self.metrics
        m.runs.labels(*m.run_labels(trajectory.service_name, trajectory.agent_name)).inc()
        ready: list[Grade] = []
        pending: list[Future[Grade]] = []
        suites = self.route(trajectory)
        if suites and self.on_run is not None:
            self.on_run(trajectory)
        for suite in suites:
            m.runs_graded.labels(suite.name).inc()
            for g in suite.graders:
                verdict = grade_safely(g.grade, trajectory)
                if isinstance(verdict, GradeResult):
                    ready.append(self._record(suite.name, g.spec, trajectory, verdict))
                else:
                    pending.append(self._later(suite.name, g.spec, trajectory, verdict))
        self.export(ready)
        return ready, pending

    def grade_trace(self, spans: Sequence[Span], logs: Sequence[LogEvent] = (), last_seen: float | None = None) -> None:
        """The live path: rebuild a completed trace and grade every run in it."""
        for trajectory in rebuild(spans, logs, self.dialects):
            self.grade(trajectory)
        if last_seen is not None:
            self.metrics.grading_delay.observe(max(0.0, self.clock() - last_seen))

    async def grade_and_wait(self, trajectory: Trajectory) -> list[Grade]:
        """The offline path: the same grading, with judges' answers awaited."""
        ready, pending = self.grade(trajectory)
        return ready + list(await asyncio.gather(*(asyncio.wrap_future(f) for f in pending)))

    def _later(
        self, suite: str, spec: GraderSpec, trajectory: Trajectory, answer: Future[GradeResult]
    ) -> Future[Grade]:
        graded: Future[Grade] = Future()

        def resolved(done: Future[GradeResult]) -> None:
            grade = self._record(suite, spec, trajectory, done.result())
            self.export([grade])
            graded.set_result(grade)

        answer.add_done_callback(resolved)
        return graded

    def _record(self, suite: str, spec: GraderSpec, trajectory: Trajectory, result: GradeResult) -> Grade:
        return Grade(
            trace_id=trajectory.trace_id,
            span_id=trajectory.span_id,
            suite=suite,
            grader=spec.name,
            score=result.score,
            passed=result.passed,
            outcome=result.outcome,
            rationale=result.rationale,
            grader_type=spec.type,
            agent_name=trajectory.agent_name,
            service_name=trajectory.service_name,
            time_unix=self.wall(),
            metadata=dict(result.metadata),
        )
