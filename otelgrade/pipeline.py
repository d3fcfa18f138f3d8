"""The `Pipeline`: a config made into the flow every completed trace takes — rebuild, route to suites, grade,
export (metrics and sinks). `serve`, `otelgrade grade`, the bench and the tests all grade through one.

Live, `grade_trace` takes one trace the assembler closed (its spans already grouped by trace id) and holds each
request run as a turn of its conversation; offline, `grade_all` takes the runs read from files, awaits the
judges' answers and grades the conversations they form at the end. A reload `prepare`s the new config's suites
and span mappings (on any thread: building graders may take a while) and `install`s them between two traces.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from otelgrade.config import Config
from otelgrade.core.metrics import Metrics
from otelgrade.core.patterns import TRACE_BUDGET_SECONDS, budget
from otelgrade.core.results import Grade
from otelgrade.core.spans import AnySpan, LogEvent
from otelgrade.core.trajectory import Trajectory
from otelgrade.export.exporter import Exporter
from otelgrade.export.sinks import Sink, TraceSink
from otelgrade.grade.grading import Grading, Suite, without_span_ground_truth
from otelgrade.grade.judges import DISABLED, JudgeClient
from otelgrade.grade.judges.runner import JudgeRunner
from otelgrade.rebuild import rebuild_grouped
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.identity import SCOPE_ATTRIBUTE
from otelgrade.rebuild.mapping import mapped_dialects


@dataclass(frozen=True)
class TraceReader:
    """How a config reads one trace (its spans grouped by trace id) into runs: its span mappings asked before the
    built-in conventions, its conversation id attributes, and whether the spans may set the ground truth."""

    dialects: tuple[Dialect, ...] = ()
    id_attributes: tuple[str, ...] = ()
    span_ground_truth: bool = False
    scope_attribute: str | None = SCOPE_ATTRIBUTE

    @classmethod
    def of(cls, config: Config) -> TraceReader:
        rebuild, conversations = config.rebuild, config.conversations
        named_by = tuple(conversations.id_attributes)
        dialects = mapped_dialects(rebuild.mappings)
        return cls(dialects, named_by, rebuild.ground_truth_from_spans, conversations.scope_attribute or None)

    def __call__(self, spans: Sequence[AnySpan], logs: Sequence[LogEvent] = ()) -> list[Trajectory]:
        runs = rebuild_grouped(spans, logs, self.dialects, self.id_attributes, self.scope_attribute)
        return [without_span_ground_truth(t, self.span_ground_truth) for t in runs]


@dataclass(frozen=True)
class Prepared:
    """A config's suites, bound to the running judges, and how it reads traces: ready to `install`."""

    config: Config
    suites: list[Suite]
    reader: TraceReader


class Pipeline:
    """Rebuild -> route -> grade -> export, as a config describes them.

    `sinks` default to the config's own (`otelgrade grade` passes none: it prints); `views` are further sinks
    that are not configured (the grades page's store, the runs log). `on_run` sees every run some suite grades.
    """

    def __init__(
        self,
        config: Config,
        metrics: Metrics | None = None,
        *,
        sinks: Sequence[Sink] | None = None,
        views: Sequence[Sink] = (),
        on_run: Callable[[Trajectory], None] | None = None,
        judges: JudgeClient = DISABLED,
        pages_url: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.metrics = metrics if metrics is not None else Metrics(label_limit=config.metrics.label_limit)
        self.clock = clock
        self.judges = judges
        if sinks is None:  # told where the grades page is, for the links they send
            sinks = [sink.linked(pages_url).build(self.metrics) for sink in config.sinks]
        self.sinks = list(sinks)
        self._trace_sinks = [sink for sink in self.sinks if isinstance(sink, TraceSink)]
        self.exporter = Exporter(self.metrics, [*self.sinks, *views])
        self.config = config
        prepared = self.prepare(config)
        self.rebuild = prepared.reader  # the runs of one trace, as the installed config reads them
        self.grading = Grading(
            prepared.suites,
            self.exporter,
            self.metrics,
            clock=clock,
            on_run=on_run,
            remember=config.assembly.regrade_traces,
            conversations=config.conversations,
            # each graded run's grades together, for the sinks about whole runs (none: nothing to gather)
            on_graded=self.exporter.run_graded if self.exporter.run_sinks else None,
            gather_wait=config.judge.timeout,
        )

    # --- configuration -------------------------------------------------------------------------

    def prepare(self, config: Config) -> Prepared:
        """The config's suites and span mappings, built (bad ones raise `ConfigError`) but not yet in use."""
        suites = [suite.bind(self.judges) for suite in config.suites]
        return Prepared(config, suites, TraceReader.of(config))

    def install(self, prepared: Prepared) -> None:
        """Grade with a prepared config from the next trace on (call it where traces are graded, between two)."""
        self.grading.install(prepared.suites)
        self.grading.remember = prepared.config.assembly.regrade_traces
        self.rebuild = prepared.reader
        self.config = prepared.config

    async def start_judges(
        self, sample: float | None = None, answers: dict[str, tuple[str | None, list[tuple[str, str]]]] | None = None
    ) -> JudgeRunner:
        """Start a judge runner on the running loop and bind the suites' judges to it; raises when it cannot
        start (then judges stay off: their graders grade `skipped`). `answers`: judges' answers to reuse and keep."""
        runner = JudgeRunner(self.config.judge, self.metrics, sample=sample, answers=answers)
        await runner.start(self.grading.judge_graders())
        self.judges = runner
        self.install(self.prepare(self.config))
        return runner

    @property
    def suites(self) -> tuple[Suite, ...]:
        return self.grading.suites

    @property
    def dialects(self) -> tuple[Dialect, ...]:
        """The installed config's span mappings."""
        return self.rebuild.dialects

    # --- the flow --------------------------------------------------------------------------------

    def grade_trace(
        self,
        spans: Sequence[AnySpan],
        logs: Sequence[LogEvent] = (),
        last_seen: float | None = None,
        revision: int = 1,
    ) -> bool:
        """The live path: one completed trace (its spans grouped by the assembler) rebuilt and every run in it
        graded (`revision` 2 and up: the trace closed again after late spans arrived); then, while a suite grades
        conversations, each request run held as a turn of its conversation. The sinks that keep traces get it
        last, told whether some of its verdicts are still to come (a judge's, or its conversation's), which is
        returned."""
        waiting = True  # if grading raises, as far as anyone knows
        try:
            waiting = self._grade_runs(spans, logs, last_seen, revision)
        finally:
            for sink in self._trace_sinks:
                if spans:
                    sink.keep_trace(spans[0].trace_id, spans, logs, waiting)
        return waiting

    def _grade_runs(
        self, spans: Sequence[AnySpan], logs: Sequence[LogEvent], last_seen: float | None, revision: int
    ) -> bool:
        waiting = False
        with budget(TRACE_BUDGET_SECONDS):  # the trace's runs share one time budget for regular expressions
            runs = self.rebuild(spans, logs)
            self.grading.count_reading(runs)
            for trajectory in runs:
                _, later = self.grading.grade(trajectory, again=revision > 1)
                waiting = waiting or bool(later)
        if last_seen is not None:
            self.metrics.grading_delay.observe(max(0.0, self.clock() - last_seen))
        if self.grading.grades_conversations():
            for trajectory in runs:
                if trajectory.parent_span_id is None:
                    self.grading.hold_turn(trajectory)
                    waiting = True
        return waiting

    def grade(self, trajectory: Trajectory) -> tuple[list[Grade], list[Future[Grade]]]:
        """One run graded: the grades ready now (already exported) and the judges' still to come."""
        return self.grading.grade(trajectory)

    async def grade_and_wait(self, trajectory: Trajectory) -> list[Grade]:
        """One run graded, the judges' answers awaited."""
        return await self.grading.grade_and_wait(trajectory)

    async def grade_all(self, runs: Sequence[Trajectory]) -> list[tuple[Trajectory, list[Grade]]]:
        """The offline path: every run graded, the judges' answers awaited; then, at the end of the input, every
        conversation the runs form (for `level: conversation` suites)."""
        graded = [(t, await self.grading.grade_and_wait(t)) for t in runs]
        if not self.grading.grades_conversations():
            return graded
        return [*graded, *await self.grading.grade_conversations_and_wait(runs)]

    def unmatched_report(self) -> str | None:
        return self.grading.unmatched_report()

    def next_deadline(self) -> float | None:
        """When the next open conversation settles (None: none is open)."""
        return self.grading.next_conversation_deadline()

    def open_conversations(self) -> int:
        return len(self.grading.conversations.open)

    def finish_conversations(self) -> None:
        """Grade every open conversation as it stands (at shutdown)."""
        self.grading.finish_conversations()

    def settle(self) -> None:
        """Grade the conversations that have settled (on the grading thread, once `next_deadline` has passed)."""
        self.grading.settle_conversations()

    def tick(self, now: float | None = None) -> None:
        """Hand on the graded runs whose judges did not answer within `judge.timeout` (`now` = inf: all)."""
        self.grading.tick(now)

    def next_due(self) -> float | None:
        """When `settle` or `tick` may next have work (None: no conversation is open, no run awaits a judge)."""
        due = [d for d in (self.grading.next_conversation_deadline(), self.grading.next_tick()) if d is not None]
        return min(due, default=None)

    def flush(self) -> None:
        self.exporter.flush()

    def close(self) -> None:
        self.exporter.close()
