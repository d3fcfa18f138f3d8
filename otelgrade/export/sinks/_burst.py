"""Count sink failures on every occurrence, log them once per burst (not once per grade)."""

from __future__ import annotations

import logging
import threading

from otelgrade.core.metrics import Metrics

log = logging.getLogger("otelgrade.export.sinks")


class ErrorBurst:
    """Logs the first failure of a burst and, when writes succeed again, how many grades it lost."""

    def __init__(self, sink: str, metrics: Metrics) -> None:
        self.sink = sink
        self._counter = metrics.sink_errors.labels(sink)
        self._lost = 0
        self._lock = threading.Lock()

    def failed(self, grades: int, reason: object) -> None:
        self._counter.inc(grades)
        with self._lock:
            first = self._lost == 0
            self._lost += grades
        if first:
            log.error("%s sink: cannot write grades (%s); counting losses until it recovers", self.sink, reason)

    def succeeded(self) -> None:
        if not self._lost:
            return
        with self._lock:
            lost, self._lost = self._lost, 0
        if lost:
            log.warning("%s sink: writing again after losing %d grade(s)", self.sink, lost)
