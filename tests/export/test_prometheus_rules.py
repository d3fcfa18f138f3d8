"""The Prometheus side against a real Prometheus: promtool checks and rule unit tests, and every
dashboard query and rule evaluated on metrics scraped from otelgrade's own `Metrics` object."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client import start_http_server

from otelgrade.core.metrics import Metrics
from tests.promserver import (
    CONFIG_DIR,
    MISSING,
    PROMETHEUS,
    PROMTOOL,
    REPO,
    RULE_FILES,
    PrometheusServer,
    free_port,
    running_prometheus,
)

UNIT_TESTS = sorted((REPO / "tests" / "prometheus").glob("*.test.yml"))
DASHBOARD = CONFIG_DIR / "grafana" / "dashboards" / "otelgrade.json"
FAILING_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
EVAL_TRACE = "0af7651916cd43dd8448eb211c80319c"

needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason=MISSING)
needs_prometheus = pytest.mark.skipif(PROMETHEUS is None, reason=MISSING)


def _promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *map(str, args)], capture_output=True, text=True, timeout=120)


@needs_promtool
def test_promtool_accepts_the_shipped_prometheus_config() -> None:
    result = _promtool("check", "config", CONFIG_DIR / "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_promtool_accepts_every_rule_file() -> None:
    result = _promtool("check", "rules", *RULE_FILES)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
@pytest.mark.parametrize("unit_test", UNIT_TESTS, ids=lambda p: p.name)
def test_alert_unit_tests_pass(unit_test: Path) -> None:
    result = _promtool("test", "rules", unit_test)
    assert result.returncode == 0, result.stdout + result.stderr


def _alert_cases() -> dict[str, set[str]]:
    """alertname -> {"fires", "quiet"} as exercised by the promtool unit tests."""
    cases: dict[str, set[str]] = {}
    for path in UNIT_TESTS:
        for test in yaml.safe_load(path.read_text())["tests"]:
            for case in test.get("alert_rule_test", []):
                cases.setdefault(case["alertname"], set()).add("fires" if case.get("exp_alerts") else "quiet")
    return cases


def test_every_alert_is_unit_tested_firing_and_quiet() -> None:
    rules = yaml.safe_load((CONFIG_DIR / "rules" / "otelgrade-alerts.yml").read_text())
    alerts = {rule["alert"] for group in rules["groups"] for rule in group["rules"] if "alert" in rule}
    cases = _alert_cases()
    assert len(alerts) >= 10
    for alert in sorted(alerts):
        assert cases.get(alert) == {"fires", "quiet"}, f"{alert}: unit tests cover {cases.get(alert)}"


def test_alertmanager_example_is_valid() -> None:
    amtool = shutil.which("amtool")
    if amtool is None:
        pytest.skip("amtool is not installed (Debian: apt-get install prometheus-alertmanager)")
    result = subprocess.run(
        [amtool, "check-config", str(CONFIG_DIR / "alertmanager.yml")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- a live Prometheus scraping otelgrade's metrics -------------------------------------------------


def _record_baseline(m: Metrics) -> None:
    """Create every series at zero (as a freshly started otelgrade would) so later increases show in rate()."""
    for environment in ("production", "eval"):
        for grader in ("correct", "helpful"):
            for outcome in ("pass", "fail", "error", "skipped"):
                m.grades.labels("booking", grader, outcome, environment)
        m.grade_score.labels("booking", "correct", environment)
        m.runs_graded.labels("booking", environment)
        m.runs_eligible.labels("booking", "helpful", environment)
    m.spans_received.labels("grpc")
    m.spans_rejected.labels("invalid_id")
    m.traces_completed.labels("complete")
    m.runs.labels("booking-agent", "booking")
    m.judge_requests.labels("gpt-4o-mini", "ok")
    m.judge_requests.labels("gpt-4o-mini", "timeout")
    m.judge_tokens.labels("gpt-4o-mini", "input")
    m.judge_cost.labels("gpt-4o-mini")
    m.judge_skipped.labels("helpful", "not_sampled")
    m.judge_paused.labels("helpful")
    m.requests.labels("grpc", "traces", "ok")
    m.log_records_dropped.labels("not_genai")
    m.grader_errors.labels("booking", "correct")
    m.sink_errors.labels("jsonl")
    m.label_overflow.labels("agent")
    m.config_reloads.labels("ok")
    for outcome in ("pass", "fail", "error", "skipped"):
        m.conversation_grades.labels("support", "no_delete", outcome, "production")
    m.conversations_completed.labels("settled")


def _record_traffic(m: Metrics) -> None:
    """Some graded production runs: 3 passes and 1 failure, plus errors and skips that must not count as failures;
    an eval run's failures that must not count in production; a judge that judged 2 of 20 eligible runs."""
    for _ in range(3):
        m.grades.labels("booking", "correct", "pass", "production").inc()
        m.grade_score.labels("booking", "correct", "production").observe(1.0)
    m.grades.labels("booking", "correct", "fail", "production").inc(exemplar={"trace_id": FAILING_TRACE})
    m.grade_score.labels("booking", "correct", "production").observe(0.0)
    m.grades.labels("booking", "correct", "error", "production").inc(5)
    m.grades.labels("booking", "correct", "skipped", "production").inc(2)
    m.grades.labels("booking", "correct", "pass", "eval").inc()
    m.grades.labels("booking", "correct", "fail", "eval").inc(6, exemplar={"trace_id": EVAL_TRACE})
    m.grade_score.labels("booking", "correct", "eval").observe(0.0)
    m.runs_eligible.labels("booking", "helpful", "production").inc(20)
    m.grades.labels("booking", "helpful", "pass", "production").inc(2)
    m.grades.labels("booking", "helpful", "skipped", "production").inc(18)
    m.spans_received.labels("grpc").inc(120)
    m.spans_rejected.labels("invalid_id").inc()
    m.traces_in_flight.set(3)
    m.spans_in_flight.set(40)
    m.traces_completed.labels("complete").inc(11)
    m.late_spans.inc()
    m.runs.labels("booking-agent", "booking").inc(11)
    m.runs_graded.labels("booking", "production").inc(11)
    m.runs_graded.labels("booking", "eval").inc(7)
    m.grading_delay.observe(2.1)
    m.judge_requests.labels("gpt-4o-mini", "ok").inc(3)
    m.judge_requests.labels("gpt-4o-mini", "timeout").inc()
    m.judge_latency.labels("gpt-4o-mini").observe(1.4)
    m.judge_tokens.labels("gpt-4o-mini", "input").inc(900)
    m.judge_cost.labels("gpt-4o-mini").inc(0.002)
    m.judge_skipped.labels("helpful", "not_sampled").inc(7)
    m.judge_queue.set(2)
    m.requests.labels("grpc", "traces", "ok").inc(4)
    m.log_records_dropped.labels("not_genai").inc(3)
    m.conversation_grades.labels("support", "no_delete", "pass", "production").inc(4)
    m.conversation_grades.labels("support", "no_delete", "fail", "production").inc()
    m.conversations_completed.labels("settled").inc(5)
    m.conversations_reopened.inc()
    m.runs_without_conversation.inc(2)


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[Metrics, PrometheusServer]]:
    """otelgrade's metrics on a real HTTP endpoint, scraped every second by a real Prometheus."""
    if PROMETHEUS is None:
        pytest.skip(MISSING)
    metrics = Metrics()
    port = free_port()
    httpd, thread = start_http_server(port, addr="127.0.0.1", registry=metrics.registry)
    try:
        _record_baseline(metrics)
        with running_prometheus([f"127.0.0.1:{port}"]) as prom:
            # One scrape of the zeroed series, then traffic, then enough scrapes for rate() to see it.
            prom.wait_for('otelgrade_grades_total{outcome="fail"}')
            _record_traffic(metrics)
            prom.wait_for('otelgrade_grades_total{outcome="fail"} == 1')
            prom.wait_for("count_over_time(otelgrade_spans_received_total[1m]) >= 3")
            yield metrics, prom
    finally:
        httpd.shutdown()
        thread.join(timeout=5)


def _dashboard_queries() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    return [
        (panel["title"], target["expr"])
        for panel in board["panels"]
        for target in panel.get("targets", [])
        if target.get("expr")
    ]


def _as_grafana_would_send(expr: str) -> str:
    """Expand the dashboard's variables the way Grafana does with "All" selected and text boxes as shipped."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "1h")
    for variable in json.loads(DASHBOARD.read_text())["templating"]["list"]:
        if variable["type"] == "textbox":
            expr = expr.replace(f"${variable['name']}", variable["current"]["value"])
    return re.sub(r"\$(suite|grader|environment)\b", ".*", expr)


def test_dashboard_has_queries() -> None:
    assert len(_dashboard_queries()) >= 15


@needs_prometheus
@pytest.mark.parametrize("title,expr", _dashboard_queries(), ids=[t for t, _ in _dashboard_queries()])
def test_every_dashboard_query_evaluates_and_finds_data(
    live: tuple[Metrics, PrometheusServer], title: str, expr: str
) -> None:
    _, prom = live
    result = prom.query(_as_grafana_would_send(expr))
    assert result, f"panel {title!r}: {expr} returned no series"


@needs_prometheus
def test_dashboard_variable_queries_find_label_values(live: tuple[Metrics, PrometheusServer]) -> None:
    _, prom = live
    board = json.loads(DASHBOARD.read_text())
    for variable in board["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+), (\w+)\)", variable["query"])
        assert match, variable["query"]
        selector = _as_grafana_would_send(match.group(1))
        values = prom.api(f"label/{match.group(2)}/values", **{"match[]": selector})
        assert values, f"variable {variable['name']}: no values for {variable['query']}"


@needs_prometheus
def test_every_rule_evaluates_without_error(live: tuple[Metrics, PrometheusServer]) -> None:
    _, prom = live
    prom.wait_for("otelgrade:pass_rate_burn:rate6h")
    time.sleep(1.5)  # one more evaluation round for every group
    groups = prom.rule_groups()
    rules = [rule for group in groups for rule in group["rules"]]
    assert len(groups) == 10
    assert rules and all(rule["health"] == "ok" for rule in rules), [
        (rule["name"], rule.get("lastError")) for rule in rules if rule["health"] != "ok"
    ]


@needs_prometheus
def test_recorded_pass_rate_leaves_out_errors_skips_and_test_traffic(live: tuple[Metrics, PrometheusServer]) -> None:
    _, prom = live
    # Production: 3 passes, 1 failure, 5 errors, 2 skips; eval: 1 pass, 6 failures. The production pass rate
    # is 3/4 whatever the window (4/11 if eval counted).
    for window in ("5m", "30m", "1h", "6h"):
        result = prom.wait_for(f'otelgrade:pass_rate:ratio_rate{window}{{suite="booking",grader="correct"}}')
        assert float(result[0]["value"][1]) == pytest.approx(0.75)
    objective = prom.wait_for('otelgrade:pass_rate_objective{suite="booking",grader="correct"}')
    assert float(objective[0]["value"][1]) == pytest.approx(0.95)
    burn = prom.wait_for('otelgrade:pass_rate_burn:rate5m{suite="booking",grader="correct"}')
    assert float(burn[0]["value"][1]) == pytest.approx(0.25 / 0.05)


@needs_prometheus
def test_failed_grade_exemplar_leads_to_the_failing_trace(live: tuple[Metrics, PrometheusServer]) -> None:
    _, prom = live
    now = time.time()
    data = prom.api(
        "query_exemplars",
        query='otelgrade_grades_total{suite="booking",grader="correct",outcome="fail"}',
        start=str(now - 300),
        end=str(now + 60),
    )
    trace_ids = {e["labels"].get("trace_id") for series in data for e in series["exemplars"]}
    assert FAILING_TRACE in trace_ids


def _panel_query(title: str) -> str:
    return next(_as_grafana_would_send(expr) for panel, expr in _dashboard_queries() if panel == title)


def _by_labels(result: list[dict[str, object]], *names: str) -> dict[tuple[str, ...], float]:
    return {tuple(r["metric"][n] for n in names): float(r["value"][1]) for r in result}  # type: ignore[index]


@needs_prometheus
def test_dashboard_shows_production_and_each_environment_apart(live: tuple[Metrics, PrometheusServer]) -> None:
    _, prom = live
    production = _by_labels(prom.query(_panel_query("Pass rate by suite and grader")), "grader")
    assert production[("correct",)] == pytest.approx(0.75)
    by_environment = _by_labels(prom.query(_panel_query("Pass rate by environment")), "grader", "environment")
    assert by_environment[("correct", "production")] == pytest.approx(0.75)
    assert by_environment[("correct", "eval")] == pytest.approx(1 / 7)
    # The judge gave a verdict on 2 of the 20 production runs routed to it.
    coverage = _by_labels(prom.query(_panel_query("Judge coverage")), "grader", "environment")
    assert coverage[("helpful", "production")] == pytest.approx(0.1)


@needs_prometheus
def test_failed_grades_panel_links_production_failures_only(live: tuple[Metrics, PrometheusServer]) -> None:
    _, prom = live
    now = time.time()
    data = prom.api("query_exemplars", query=_panel_query("Failed grades"), start=str(now - 300), end=str(now + 60))
    trace_ids = {e["labels"].get("trace_id") for series in data for e in series["exemplars"]}
    assert FAILING_TRACE in trace_ids and EVAL_TRACE not in trace_ids
