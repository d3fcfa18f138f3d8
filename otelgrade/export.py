"""Export grades: count them in the metrics, once per series per batch (failures carry a trace id as an
exemplar), and write them to the configured sinks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from otelgrade.metrics import Metrics
from otelgrade.results import Grade
from otelgrade.sinks import Sink

log = logging.getLogger(__name__)


class Exporter:
    """Callable with each batch of grades, from any thread; sinks see whole batches, one at a time."""

    def __init__(self, metrics: Metrics, sinks: Sequence[Sink] = ()) -> None:
        self.metrics = metrics
        self.sinks = list(sinks)
        self._lock = threading.Lock()
        self._counters: dict[tuple[str, str, str], Any] = {}  # label children, looked up once per series

    def __call__(self, grades: Sequence[Grade]) -> None:
        if not grades:
            return
        m = self.metrics
        counts: dict[tuple[str, str, str], int] = {}
        failed: dict[tuple[str, str, str], str] = {}  # the trace id of a failure, the series' exemplar
        for g in grades:
            key: tuple[str, str, str] = (g.suite, g.grader, g.outcome)
            counts[key] = counts.get(key, 0) + 1
            if g.outcome == "fail":
                failed[key] = g.trace_id
            if g.score is not None and g.outcome in ("pass", "fail"):
                m.grade_score.labels(g.suite, g.grader).observe(min(1.0, max(0.0, g.score)))
            if g.metadata.get("exception"):
                m.grader_errors.labels(g.suite, g.grader).inc()
        for key, count in counts.items():
            counter = self._counters.get(key)
            if counter is None:
                counter = self._counters[key] = m.grades.labels(*key)
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

    def flush(self) -> None:
        for sink in self.sinks:
            sink.flush()

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
