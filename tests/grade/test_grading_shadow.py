"""Shadow suites: a suite marked `shadow: true` is graded and recorded like any other, but kept out of the shipped
alerts, so a new grader version runs beside the old one on production traffic before it is promoted. Live: a real
Prometheus with the shipped rules pages for the regular suite's failures and never for the shadow suite's."""

from __future__ import annotations

import time
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.grade.grading import Suite, alert_policies
from tests.e2e.test_alerting_live import FAILING, PASSING, _wait_for_evaluation, send_runs
from tests.promserver import PROMETHEUS, running_prometheus

SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}
BUDGET = {"name": "budget", "type": "max_tool_calls", "max": 1}
BOOKING = {"service.name": "booking-agent"}


def test_shadow_is_read_from_the_suite_and_makes_every_grader_page_never() -> None:
    config = parse_config(
        {
            "suites": [
                {"name": "booking_v2", "shadow": True, "match": BOOKING, "graders": [SAFE, BUDGET]},
                {"name": "booking", "match": BOOKING, "graders": [SAFE, BUDGET]},
            ]
        }
    )
    built = [Suite.build(s.name, s.match, s.graders, shadow=s.shadow) for s in config.suites]
    assert [alert_policies(suite) for suite in built] == [
        {"safe": "none", "budget": "none"},
        {"safe": "any", "budget": "objective"},
    ]


def test_shadow_must_be_true_or_false() -> None:
    with pytest.raises(ConfigError, match="shadow"):
        parse_config({"suites": [{"name": "v2", "shadow": "yes", "graders": [SAFE]}]})


def firing_for(alerts: list[dict[str, Any]], suite: str) -> list[dict[str, Any]]:
    return [a for a in alerts if a["state"] == "firing" and a["labels"].get("suite") == suite]


@pytest.mark.skipif(PROMETHEUS is None, reason="Prometheus is not installed; `make test` installs it")
def test_a_shadow_suites_failures_fire_no_alert(serve: Any) -> None:
    suites = [
        {"name": "booking", "match": BOOKING, "graders": [SAFE]},
        {"name": "booking_v2", "shadow": True, "match": BOOKING, "graders": [SAFE]},
    ]
    server = serve({"suites": suites})
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"]) as prometheus:
        prometheus.wait_for('otelgrade_grader_alert_policy{suite="booking_v2",grader="safe",policy="none"}')
        prometheus.wait_for('otelgrade_grades_total{suite="booking_v2",grader="safe",outcome="fail"}')
        send_runs(server.grpc_address, PASSING, 3)
        send_runs(server.grpc_address, FAILING, 15)
        # Both suites grade and record every run: the shadow suite's failures are in its metrics and sinks.
        prometheus.wait_for('otelgrade_grades_total{suite="booking_v2",grader="safe",outcome="fail"} == 15')
        prometheus.wait_for('otelgrade_grades_total{suite="booking",grader="safe",outcome="fail"} == 15')
        assert sum(g["suite"] == "booking_v2" and g["outcome"] == "fail" for g in server.grades()) == 15
        # The regular suite's guardrail pages on the very same failures; the rules have seen them all.
        prometheus.wait_for("ALERTS", timeout=60, check=lambda _: bool(firing_for(prometheus.alerts(), "booking")))
        _wait_for_evaluation(prometheus, "otelgrade-guardrails", after=time.time())
        alerts = prometheus.alerts()
        assert firing_for(alerts, "booking") and not [a for a in alerts if a["labels"].get("suite") == "booking_v2"]
    assert server.stop() == 0
