"""The operator's path, live: a real Prometheus scrapes a running `otelgrade serve` with the shipped
rules loaded; a burst of failing agent runs (sent by the OTel SDK) turns the pass-rate alert to
firing, the failing trace ids come back as exemplars, and every dashboard query evaluates. Failing
runs of an eval environment, mixed with production's, neither page nor move the production pass rate."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.promserver import PROMETHEUS, PrometheusServer, running_prometheus
from tests.test_prometheus_rules import _as_grafana_would_send, _dashboard_queries

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Prometheus is not installed; `make test` installs it")


BOOKING = {
    "suites": [
        {
            "name": "booking",
            "match": {"service.name": "booking-agent"},
            "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
        }
    ]
}
PASSING, FAILING = ["search_flights"], ["search_flights", "delete_account"]


def send_runs(grpc_address: str, tools: list[str], count: int, environment: str | None = None) -> list[str]:
    """`count` booking-agent runs calling `tools`, exported by the SDK's OTLP/gRPC exporter from a process in
    `environment` (the resource's deployment.environment.name); returns trace ids."""
    resource = {"service.name": "booking-agent"}
    if environment is not None:
        resource["deployment.environment.name"] = environment
    provider = TracerProvider(resource=Resource(resource))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=grpc_address, insecure=True)))
    tracer = provider.get_tracer("booking-agent")
    trace_ids = []
    for i in range(count):
        run_attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "booking"}
        with tracer.start_as_current_span("invoke_agent booking", attributes=run_attrs) as run:
            trace_ids.append(format(run.get_span_context().trace_id, "032x"))
            with tracer.start_as_current_span("chat gpt-4o-mini", attributes={"gen_ai.operation.name": "chat"}):
                pass
            for j, tool in enumerate(tools):
                tool_attrs = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.id": f"call_{i}_{j}",
                }
                with tracer.start_as_current_span(f"execute_tool {tool}", attributes=tool_attrs):
                    pass
    provider.shutdown()
    return trace_ids


def firing(prometheus: PrometheusServer) -> list[dict[str, Any]]:
    return [
        a
        for a in prometheus.alerts()
        if a["labels"].get("alertname") == "OtelgradePassRateBurnFast" and a["state"] == "firing"
    ]


def test_failing_runs_fire_the_pass_rate_alert_with_trace_exemplars(serve):
    server = serve(BOOKING)
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"]) as prometheus:
        # The grade series exist at zero before any run, so the first failures already count in rate().
        # These runs name no environment (`unknown`): they count as production.
        prometheus.wait_for('otelgrade_grades_total{suite="booking",grader="safe",outcome="fail"}')
        send_runs(server.grpc_address, PASSING, 3)
        failing = send_runs(server.grpc_address, FAILING, 15)
        server.wait_for_metric("otelgrade_grades_total", {"grader": "safe", "outcome": "fail"}, 15)
        prometheus.wait_for("ALERTS", timeout=60, check=lambda _: bool(firing(prometheus)))
        alert = firing(prometheus)[0]
        assert (alert["labels"]["suite"], alert["labels"]["grader"]) == ("booking", "safe")
        assert "failing far more runs than its objective allows" in alert["annotations"]["summary"]
        assert not [a for a in prometheus.alerts() if a["labels"]["alertname"] == "OtelgradeNoSpansReceived"]

        exemplars = prometheus.api(
            "query_exemplars", query='otelgrade_grades_total{outcome="fail"}', start="0", end="9999999999"
        )
        exemplar_ids = {e["labels"]["trace_id"] for series in exemplars for e in series["exemplars"]}
        assert exemplar_ids and exemplar_ids <= set(failing)

        for _title, expr in _dashboard_queries():
            prometheus.api("query", query=_as_grafana_would_send(expr))  # raises on any PromQL error
    assert server.stop() == 0


def test_eval_failures_neither_page_nor_move_the_production_pass_rate(serve):
    server = serve(BOOKING)
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"]) as prometheus:
        # The first run of each environment starts its series; Prometheus scrapes them before the rest arrive,
        # so rate() sees every later grade.
        send_runs(server.grpc_address, PASSING, 1, "production")
        send_runs(server.grpc_address, FAILING, 1, "eval")
        prometheus.wait_for('otelgrade_grades_total{environment="production",outcome="fail"} == 0')
        prometheus.wait_for('otelgrade_grades_total{environment="eval",outcome="fail"} == 1')
        send_runs(server.grpc_address, PASSING, 5, "production")
        send_runs(server.grpc_address, FAILING, 15, "eval")
        prometheus.wait_for('otelgrade_grades_total{environment="eval",outcome="fail"} == 16')

        # Counted together, a quarter of the grades rate() sees pass; production's pass rate stays 100%, and
        # no rule evaluation since all of it was scraped turns the alert on.
        rates = [f'sum(rate(otelgrade_grades_total{{outcome=~"{o}"}}[5m]))' for o in ("pass", "pass|fail")]
        prometheus.wait_for(f"{rates[0]} / {rates[1]} < 0.5")
        prometheus.wait_for('otelgrade:pass_rate:ratio_rate5m{suite="booking",grader="safe"} == 1')
        _wait_for_evaluation(prometheus, "otelgrade-pass-rate", after=time.time())
        assert not firing(prometheus)
        production = prometheus.query('otelgrade:pass_rate:ratio_rate5m{suite="booking",grader="safe"}')
        assert float(production[0]["value"][1]) == 1.0

        # Production failures page.
        failing = send_runs(server.grpc_address, FAILING, 15, "production")
        prometheus.wait_for("ALERTS", timeout=60, check=lambda _: bool(firing(prometheus)))
        exemplars = prometheus.api(
            "query_exemplars",
            query='otelgrade_grades_total{outcome="fail",environment="production"}',
            start="0",
            end="9999999999",
        )
        exemplar_ids = {e["labels"]["trace_id"] for series in exemplars for e in series["exemplars"]}
        assert exemplar_ids and exemplar_ids <= set(failing)
    assert server.stop() == 0


def _wait_for_evaluation(prometheus: PrometheusServer, group: str, after: float, timeout: float = 30.0) -> None:
    """Wait until the rule group has been evaluated again, a full second after `after`."""

    def evaluated(_: Any) -> bool:
        found = next(g for g in prometheus.rule_groups() if g["name"] == group)
        return datetime.fromisoformat(found["lastEvaluation"][:19]).replace(tzinfo=UTC).timestamp() > after + 1

    prometheus.wait_for("vector(1)", timeout=timeout, check=evaluated)
