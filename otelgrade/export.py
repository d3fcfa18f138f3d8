"""Export grades: count them in the metrics (failures carry their trace id as an exemplar) and write them to
the configured sinks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

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

    def __call__(self, grades: Sequence[Grade]) -> None:
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
