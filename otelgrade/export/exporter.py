"""Export grades: count them in the metrics, once per series per batch (failures carry a trace id as an
exemplar), and write them to the configured sinks. A run's later revisions (re-graded on late spans) go to the
sinks but are not counted again: `otelgrade_regrades_total` counts them."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import OUTCOMES, Grade
from otelgrade.export.sinks import ClosingSink, RunSink, Sink
from otelgrade.grade.gathering import GradedRun

log = logging.getLogger(__name__)

Series = tuple[str, str, str, str, str]  # level, then suite, grader, outcome, environment: the labels of
# otelgrade_grades_total (level `run`) or otelgrade_conversation_grades_total (level `conversation`)


class Exporter:
    """Callable with each batch of grades, from any thread; sinks see whole batches, one at a time."""

    def __init__(self, metrics: Metrics, sinks: Sequence[Sink] = ()) -> None:
        self.metrics = metrics
        self.sinks = list(sinks)
        self.run_sinks = [sink for sink in self.sinks if isinstance(sink, RunSink)]
        self._lock = threading.Lock()
        self._counters: dict[Series, Any] = {}  # label children, looked up once per series
        self._scores: dict[tuple[str, str, str, str], Any] = {}  # the score histograms' (level, suite, grader, env)

    def __call__(self, grades: Sequence[Grade]) -> None:
        if not grades:
            return
        m = self.metrics
        counts: dict[Series, int] = {}
        failed: dict[Series, str] = {}  # the trace id of a failure, the series' exemplar
        for g in grades:
            if g.revision > 1:
                continue
            environment = m.environment(g.environment)
            key: Series = (g.level, g.suite, g.grader, g.outcome, environment)
            counts[key] = counts.get(key, 0) + 1
            if g.outcome == "fail":
                failed[key] = g.trace_id
            if g.score is not None and g.outcome in ("pass", "fail"):
                series = (g.level, g.suite, g.grader, environment)
                histogram = self._scores.get(series)
                if histogram is None:
                    scores = m.conversation_grade_score if g.level == "conversation" else m.grade_score
                    histogram = self._scores[series] = scores.labels(g.suite, g.grader, environment)
                histogram.observe(min(1.0, max(0.0, g.score)))
            if g.metadata.get("exception"):
                m.grader_errors.labels(g.suite, g.grader).inc()
        for key, count in counts.items():
            counter = self._counters.get(key)
            if counter is None:
                counter = self._start(key)
            if key in failed:
                counter.inc(count, exemplar={"trace_id": failed[key]})
            else:
                counter.inc(count)
        with self._lock:
            for sink in self.sinks:
                try:
                    sink.write(grades)
                except Exception:  # a sink's failures are counted by the sink; they never stop grading
                    log.exception("sink %s failed", type(sink).__name__)

    def run_graded(self, run: GradedRun) -> None:
        """A graded run's grades together (already counted and written one by one): to the sinks about runs."""
        with self._lock:
            for sink in self.run_sinks:
                try:
                    sink.write_run(run)
                except Exception:
                    log.exception("sink %s failed", type(sink).__name__)

    def _start(self, key: Series) -> Any:
        """The series' counter, its grader's other outcomes in this environment started at zero with it, so that
        `rate()` counts their first increase (the first failure after passes)."""
        level, suite, grader, _, environment = key
        family = self.metrics.conversation_grades if level == "conversation" else self.metrics.grades
        for other in OUTCOMES:
            series = (suite, grader, other, environment)
            self._counters[(level, *series)] = family.labels(*series)
        return self._counters[key]

    def flush(self) -> None:
        for sink in self.sinks:
            sink.flush()

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()

    def finish(self, seconds: float) -> None:
        """Flush and close every sink at shutdown, the ones that deliver over the network within `seconds` in all
        (what is left of `server.shutdown_timeout`), whatever their endpoints do."""
        end = time.monotonic() + seconds
        for sink in self.sinks:
            if isinstance(sink, ClosingSink):
                sink.close_within(max(0.0, end - time.monotonic()))
            else:
                sink.flush()
                sink.close()
