"""Route each rebuilt run to the suites whose `match` accepts it, grade it, count it, write it.

The live server and the offline CLI share this code: `handle_trace` (live) and `grade_offline`
(CLI) differ only in whether judge graders are queued or awaited.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from otelgrade.config import Config
from otelgrade.graders import GradeResult, GraderSpec, build_grader, grader_type
from otelgrade.metrics import Metrics
from otelgrade.rebuild import rebuild
from otelgrade.results import Grade
from otelgrade.spans import LogEvent, Span
from otelgrade.trajectory import Trajectory

log = logging.getLogger(__name__)

OUTCOMES = ("pass", "fail", "error", "skipped")


class Sink(Protocol):
    def write(self, grades: Sequence[Grade]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


class JudgeQueue(Protocol):
    def submit(
        self, trajectory: Trajectory, grader_name: str, judge: Any, done: Callable[[GradeResult], None]
    ) -> GradeResult | None: ...

    async def evaluate(self, trajectory: Trajectory, grader_name: str, judge: Any) -> GradeResult: ...


# --- routing ----------------------------------------------------------------------------------

_FIELDS: dict[str, Callable[[Trajectory], Any]] = {
    "service.name": lambda t: t.service_name,
    "service_name": lambda t: t.service_name,
    "agent_name": lambda t: t.agent_name,
    "gen_ai.agent.name": lambda t: t.agent_name,
    "source": lambda t: t.source,
    "status": lambda t: t.status,
}


def _value_matcher(expected: Any) -> Callable[[Any], bool]:
    """A string starting with `^` is a regular expression; anything else must be equal."""
    if isinstance(expected, list):
        options = [_value_matcher(e) for e in expected]
        return lambda v: any(option(v) for option in options)
    if isinstance(expected, str) and expected.startswith("^"):
        pattern = re.compile(expected)
        return lambda v: v is not None and pattern.search(str(v)) is not None
    if isinstance(expected, str):
        return lambda v: v is not None and str(v) == expected
    return lambda v: v == expected


def _attribute_reader(key: str) -> Callable[[Trajectory], Any]:
    return lambda t: t.attributes.get(key)


def match_filter(match: Mapping[str, Any]) -> Callable[[Trajectory], bool]:
    """Build the predicate of a suite's `match` block: every key must match (an empty block matches all)."""
    checks: list[tuple[Callable[[Trajectory], Any], Callable[[Any], bool]]] = []
    for key, expected in match.items():
        read = _FIELDS.get(key) or _attribute_reader(key)
        checks.append((read, _value_matcher(expected)))
    return lambda t: all(accepts(read(t)) for read, accepts in checks)


# --- built suites -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BuiltGrader:
    spec: GraderSpec
    run: Any  # Trajectory -> GradeResult, or a judge the JudgeQueue executes
    judge: bool


@dataclass(frozen=True)
class BuiltSuite:
    name: str
    accepts: Callable[[Trajectory], bool]
    graders: tuple[BuiltGrader, ...]


def build_suites(config: Config) -> list[BuiltSuite]:
    suites = []
    for suite in config.suites:
        graders = tuple(
            BuiltGrader(spec, build_grader(spec.type, spec.params), grader_type(spec.type).judge)
            for spec in suite.graders
        )
        suites.append(BuiltSuite(suite.name, match_filter(suite.match), graders))
    return suites


def apply_threshold(result: GradeResult, threshold: float | None) -> GradeResult:
    if threshold is None or result.score is None or result.outcome not in ("pass", "fail"):
        return result
    passed = result.score >= threshold
    return result.model_copy(update={"passed": passed, "outcome": "pass" if passed else "fail"})


def run_code_grader(grader: BuiltGrader, trajectory: Trajectory) -> GradeResult:
    """A code grader's verdict; one that raises is an `error` grade carrying the exception."""
    try:
        result = grader.run(trajectory)
    except Exception as exc:  # a grader bug must not cost the run its other grades
        return GradeResult.error(f"grader raised {type(exc).__name__}: {exc}", exception=type(exc).__name__)
    return apply_threshold(result, grader.spec.threshold)


# --- the engine -------------------------------------------------------------------------------


class Engine:
    """Grades runs with the current config; `reload` swaps the config without losing anything."""

    def __init__(
        self,
        config: Config,
        metrics: Metrics | None = None,
        sinks: Iterable[Sink] = (),
        judges: JudgeQueue | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.metrics = metrics or Metrics()
        self.sinks = list(sinks)
        self.judges = judges
        self.clock = clock
        self._lock = threading.Lock()
        self._suites = self._install(build_suites(config))

    def reload(self, config: Config) -> None:
        """Build the new suites first, so a config that fails to build leaves the old one running."""
        self._suites = self._install(build_suites(config))

    def _install(self, suites: list[BuiltSuite]) -> list[BuiltSuite]:
        """Create every suite/grader/outcome series at zero: `rate()` needs a sample before the first grade."""
        for suite in suites:
            self.metrics.runs_graded.labels(suite.name)
            for grader in suite.graders:
                for outcome in OUTCOMES:
                    self.metrics.grades.labels(suite.name, grader.spec.name, outcome)
        return suites

    def route(self, trajectory: Trajectory) -> list[BuiltSuite]:
        return [suite for suite in self._suites if suite.accepts(trajectory)]

    # live path

    def handle_trace(
        self, spans: Sequence[Span], logs: Sequence[LogEvent] = (), last_seen: float | None = None
    ) -> list[Grade]:
        """Rebuild a completed trace, grade every run in it, and export the code graders' grades."""
        grades: list[Grade] = []
        for trajectory in rebuild(spans, logs):
            grades.extend(self.grade_run(trajectory))
        if last_seen is not None:
            self.metrics.grading_delay.observe(max(0.0, self.clock() - last_seen))
        return grades

    def grade_run(self, trajectory: Trajectory) -> list[Grade]:
        """Code graders now; judge graders go to the judge queue and are exported when they answer."""
        self._count_run(trajectory)
        grades = []
        for suite in self.route(trajectory):
            self.metrics.runs_graded.labels(suite.name).inc()
            for grader in suite.graders:
                if grader.judge:
                    result = self._submit_judge(suite, grader, trajectory)
                    if result is None:
                        continue
                else:
                    result = run_code_grader(grader, trajectory)
                grades.append(self._grade(suite.name, grader, trajectory, result))
        self.export(grades)
        return grades

    def _submit_judge(self, suite: BuiltSuite, grader: BuiltGrader, trajectory: Trajectory) -> GradeResult | None:
        if self.judges is None:
            return GradeResult.skipped("judge graders are disabled (no judge runner)")

        def done(result: GradeResult) -> None:
            self.export([self._grade(suite.name, grader, trajectory, apply_threshold(result, grader.spec.threshold))])

        return self.judges.submit(trajectory, grader.spec.name, grader.run, done)

    # offline path

    async def grade_offline(self, trajectory: Trajectory) -> list[Grade]:
        """Every grader of every matching suite, judges awaited; exported like live grades."""
        self._count_run(trajectory)
        grades = []
        for suite in self.route(trajectory):
            self.metrics.runs_graded.labels(suite.name).inc()
            for grader in suite.graders:
                if not grader.judge:
                    result = run_code_grader(grader, trajectory)
                elif self.judges is None:
                    result = GradeResult.skipped("judge graders are disabled (no judge runner)")
                else:
                    result = apply_threshold(
                        await self.judges.evaluate(trajectory, grader.spec.name, grader.run), grader.spec.threshold
                    )
                grades.append(self._grade(suite.name, grader, trajectory, result))
        self.export(grades)
        return grades

    # export

    def _grade(self, suite: str, grader: BuiltGrader, trajectory: Trajectory, result: GradeResult) -> Grade:
        return Grade(
            trace_id=trajectory.trace_id,
            span_id=trajectory.span_id,
            suite=suite,
            grader=grader.spec.name,
            score=result.score,
            passed=result.passed,
            outcome=result.outcome,
            rationale=result.rationale,
            grader_type=grader.spec.type,
            agent_name=trajectory.agent_name,
            service_name=trajectory.service_name,
            time_unix=time.time(),
            metadata=dict(result.metadata),
        )

    def _count_run(self, trajectory: Trajectory) -> None:
        m = self.metrics
        m.runs.labels(m.service_label(trajectory.service_name), m.agent_label(trajectory.agent_name)).inc()

    def export(self, grades: Sequence[Grade]) -> None:
        """Count grades in metrics (failures carry their trace id as an exemplar) and write them to sinks."""
        if not grades:
            return
        m = self.metrics
        for g in grades:
            counter = m.grades.labels(g.suite, g.grader, g.outcome)
            if g.outcome == "fail":
                counter.inc(exemplar={"trace_id": g.trace_id})
            else:
                counter.inc()
            if g.score is not None and g.outcome in ("pass", "fail"):
                m.grade_score.labels(g.suite, g.grader).observe(min(1.0, max(0.0, g.score)))
            if g.metadata.get("exception"):
                m.grader_errors.labels(g.suite, g.grader).inc()
        with self._lock:  # sinks see whole batches, whichever thread a grade came from
            for sink in self.sinks:
                try:
                    sink.write(grades)
                except Exception:  # a sink's failure is counted by the sink; it never stops grading
                    log.exception("sink %s failed", type(sink).__name__)
