"""The operator's path, live: a real Prometheus scrapes a running `otelgrade serve` with the shipped
rules loaded and sends its alerts to a real Alertmanager routed by the shipped alertmanager.yml. One
agent run in 50 (sent by the OTel SDK) calling a forbidden tool pages, and the page link in the alert
lists that run; a freshly deployed score grader failing every run raises no burn-rate alert; the
failing trace ids come back as exemplars, and every dashboard query evaluates. Failing runs of an eval
environment, mixed with production's, neither page nor move the production pass rate."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.export.test_prometheus_rules import _as_grafana_would_send, _dashboard_queries
from tests.promserver import (
    ALERTMANAGER,
    CONFIG_DIR,
    PROMETHEUS,
    PrometheusServer,
    free_port,
    running_alertmanager,
    running_prometheus,
)

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


def firing(prometheus: PrometheusServer, alertname: str = "OtelgradeGuardrailFailed") -> list[dict[str, Any]]:
    return [a for a in prometheus.alerts() if a["labels"].get("alertname") == alertname and a["state"] == "firing"]


def test_failing_runs_fire_the_guardrail_alert_with_trace_exemplars(serve):
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
        assert alert["annotations"]["summary"] == "Guardrail safe of suite booking failed a production run"
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
        # no rule evaluation since all of it was scraped turns the guardrail's alert on.
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


# --- the alert as a person receives it --------------------------------------------------------------

GUARDED = {
    "suites": [
        {
            "name": "booking",
            "match": {"service.name": "booking-agent"},
            "graders": [
                # A guardrail: pages on any failure (its type's default policy).
                {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
                # A score: pages on burn rates. No run books a flight, so it fails every run from its first.
                {"name": "booked", "type": "tools_called", "tools": ["book_flight"]},
            ],
        }
    ]
}


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """An HTTP server on 127.0.0.1 keeping every notification Alertmanager posts: (path, JSON body)."""
    received: list[tuple[str, dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, json.loads(body)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        thread.join(timeout=5)


def shipped_alertmanager_config(webhook: str) -> dict[str, Any]:
    """collector_config/alertmanager.yml as shipped (routes, grouping, timings, inhibitions), its receivers
    replaced by webhooks to `webhook`/<receiver name>."""
    config: dict[str, Any] = yaml.safe_load((CONFIG_DIR / "alertmanager.yml").read_text())
    config["receivers"] = [
        {"name": r["name"], "webhook_configs": [{"url": f"{webhook}/{r['name']}", "send_resolved": True}]}
        for r in config["receivers"]
    ]
    return config


def listed_runs(url: str) -> list[str]:
    """The trace ids of the runs a grades page lists, in order."""
    with urllib.request.urlopen(url, timeout=10) as response:
        page = response.read().decode()
    return re.findall(r'class="run-link" href="runs/([0-9a-f]{32})', page)


@pytest.mark.skipif(
    ALERTMANAGER is None, reason="Alertmanager is not installed (apt-get install prometheus-alertmanager)"
)
def test_one_guardrail_failure_in_50_runs_pages_with_a_link_to_it_and_a_fresh_score_does_not(serve):
    server = serve(GUARDED)
    with (
        webhook_receiver() as (webhook, received),
        running_alertmanager(shipped_alertmanager_config(webhook)) as alertmanager,
        running_prometheus([f"127.0.0.1:{server.metrics_port}"], alertmanagers=[alertmanager.address]) as prometheus,
    ):
        prometheus.wait_for('otelgrade_grades_total{suite="booking",grader="safe",outcome="fail"}')
        prometheus.wait_for('otelgrade_grader_alert_policy{grader="safe",policy="any"}')
        prometheus.wait_for('otelgrade_grader_alert_policy{grader="booked",policy="objective"}')

        # 50 runs; the 31st calls delete_account. Two minutes for the page to reach the on-call receiver.
        sent = time.monotonic()
        send_runs(server.grpc_address, PASSING, 30)
        (failing,) = send_runs(server.grpc_address, FAILING, 1)
        send_runs(server.grpc_address, PASSING, 19)

        def paged() -> list[dict[str, Any]]:
            return [
                alert
                for path, body in received
                if path == "/otelgrade-oncall"
                for alert in body["alerts"]
                if alert["labels"]["alertname"] == "OtelgradeGuardrailFailed" and alert["status"] == "firing"
            ]

        prometheus.wait_for("vector(1)", timeout=120 - (time.monotonic() - sent), check=lambda _: bool(paged()))
        alert = paged()[0]
        assert (alert["labels"]["suite"], alert["labels"]["grader"]) == ("booking", "safe")

        # The link in the alert opens the grades page listing exactly the failing run.
        link = alert["annotations"]["grades_page"]
        assert link == f"http://127.0.0.1:{server.metrics_port}/?suite=booking&grader=safe&outcome=fail"
        assert listed_runs(link) == [failing]

        # Every run failed the freshly deployed score, far past its objective's burn thresholds; its grades are
        # minutes old, younger than either burn alert's long window, so neither alert even becomes pending.
        server.wait_for_metric("otelgrade_grades_total", {"grader": "booked", "outcome": "fail"}, 50)
        prometheus.wait_for('otelgrade:pass_rate_burn:rate6h{grader="booked"} > 2')
        prometheus.wait_for('otelgrade:pass_rate_burn:rate1h{grader="booked"} > 4')
        _wait_for_evaluation(prometheus, "otelgrade-pass-rate", after=time.time())
        burning = [a for a in prometheus.alerts() if a["labels"]["alertname"].startswith("OtelgradePassRateBurn")]
        assert burning == []
        notified = {a["labels"]["alertname"] for _, body in received for a in body["alerts"]}
        assert notified == {"OtelgradeGuardrailFailed"}
    assert server.stop() == 0
