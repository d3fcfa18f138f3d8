"""The operator's path, live: a real Prometheus scrapes a running `otelgrade serve` with the shipped
rules loaded; a burst of failing agent runs (sent by the OTel SDK) turns the pass-rate alert to
firing, the failing trace ids come back as exemplars, and every dashboard query evaluates."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.promserver import PROMETHEUS, running_prometheus
from tests.test_prometheus_rules import _as_grafana_would_send, _dashboard_queries

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Prometheus is not installed; `make test` installs it")


def send_runs(grpc_address: str, tools: list[str], count: int) -> list[str]:
    """`count` booking-agent runs calling `tools`, exported by the SDK's OTLP/gRPC exporter; returns trace ids."""
    provider = TracerProvider(resource=Resource({"service.name": "booking-agent"}))
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


def test_failing_runs_fire_the_pass_rate_alert_with_trace_exemplars(serve):
    server = serve(
        {
            "suites": [
                {
                    "name": "booking",
                    "match": {"service.name": "booking-agent"},
                    "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
                }
            ]
        }
    )
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"]) as prometheus:
        # The grade series exist at zero before any run, so the first failures already count in rate().
        prometheus.wait_for('otelgrade_grades_total{suite="booking",grader="safe",outcome="fail"}')
        send_runs(server.grpc_address, ["search_flights"], 3)
        failing = send_runs(server.grpc_address, ["search_flights", "delete_account"], 15)
        server.wait_for_metric("otelgrade_grades_total", {"grader": "safe", "outcome": "fail"}, 15)

        def firing(alerts):
            return [
                a
                for a in alerts
                if a["labels"].get("alertname") == "OtelgradePassRateBurnFast" and a["state"] == "firing"
            ]

        prometheus.wait_for("ALERTS", timeout=60, check=lambda _: bool(firing(prometheus.alerts())))
        alert = firing(prometheus.alerts())[0]
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
