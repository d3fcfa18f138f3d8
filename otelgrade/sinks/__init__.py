"""Result sinks: where grades go besides the metrics (a JSONL file, an OTLP tracing backend).

A sink is written to from a grading worker thread; it never raises into grading. Failures are
counted in `otelgrade_sink_errors_total{sink}` and logged once per burst.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from otelgrade import config
from otelgrade.metrics import Metrics
from otelgrade.results import Grade


class Sink(Protocol):
    """One destination for grades. Every method is thread-safe and never raises."""

    def write(self, grades: Sequence[Grade]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def make_sinks(configs: Sequence[config.Sink], metrics: Metrics) -> list[Sink]:
    """Build the configured sinks (the config loader has already checked each one's fields)."""
    from otelgrade.sinks.jsonl import JsonlSink
    from otelgrade.sinks.otlp import OtlpSink

    sinks: list[Sink] = []
    for cfg in configs:
        if cfg.type == "jsonl":
            assert cfg.path is not None
            sinks.append(JsonlSink(cfg.path, metrics, max_bytes=cfg.max_bytes, backups=cfg.backups))
        else:
            assert cfg.endpoint is not None
            sinks.append(OtlpSink(cfg.endpoint, metrics, insecure=cfg.insecure))
    return sinks


__all__ = ["Sink", "make_sinks"]
