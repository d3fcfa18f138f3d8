"""A sink that cannot write logs the first failure of a burst, counts every lost grade, and says when it recovers."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import CollectorRegistry

from otelgrade.core.metrics import Metrics
from otelgrade.export.sinks._burst import ErrorBurst


def test_a_burst_logs_once_counts_all_and_reports_the_loss_on_recovery(caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics(CollectorRegistry())
    burst = ErrorBurst("jsonl", metrics)
    with caplog.at_level(logging.WARNING, logger="otelgrade.export.sinks"):
        for _ in range(3):
            burst.failed(4, OSError("disk full"))
        burst.succeeded()
        burst.succeeded()
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "jsonl sink: cannot write grades (disk full); counting losses until it recovers",
        "jsonl sink: writing again after losing 12 grade(s)",
    ]
    assert metrics.registry.get_sample_value("otelgrade_sink_errors_total", {"sink": "jsonl"}) == 12
