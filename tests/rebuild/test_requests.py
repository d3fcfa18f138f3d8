"""The request is the unit graded by default; an agent suite grades that agent wherever it runs; what otelgrade
could not read gives `skipped` (never `pass`), and what it could not read is counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.config import load_config, parse_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import GradeResult
from otelgrade.core.spans import Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.base import build_grader, grade_safely
from otelgrade.intake.decode import decode_traces
from otelgrade.pipeline import Pipeline
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.unread import would_hold
from tests.captures import rebuild_folder
from tests.e2e.test_rebuild_captures import find_run, scenarios
from tests.paths import FIXTURES
from tests.rebuild.test_handoffs import _oi, _otlp

FRAMEWORKS = FIXTURES / "frameworks"
SAFETY = """
suites:
  - name: requests
    graders:
      - {name: safe, type: tools_not_called, tools: [delete_account]}
      - {name: efficient, type: max_tool_calls, max: 5}
  - name: accounts
    match: {agent_name: account_agent}
    graders:
      - {name: safe, type: tools_not_called, tools: [delete_account]}
"""


def otelgrade(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "otelgrade", *map(str, args)], capture_output=True, text=True, timeout=60
    )


def grades(config: Path, *inputs: Path) -> list[dict[str, Any]]:
    result = otelgrade("grade", "--format", "json", "--config", config, *inputs)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def sdk_trace(tmp_path: Path, build: Any) -> Path:
    """A trace made by the real OpenTelemetry SDK, written as the OTLP protobuf request an exporter sends."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("acme.agents"))
    provider.shutdown()
    path = tmp_path / "trace.pb"
    path.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    return path


def test_a_worker_s_forbidden_call_fails_the_request_and_the_worker_s_own_run(tmp_path: Path) -> None:
    """A triage agent hands off to an account agent that deletes the account: the request the user made fails,
    graded once; the suite that names the worker grades the worker's own run, nested in the request."""
    (tmp_path / "otelgrade.yaml").write_text(SAFETY)
    got = grades(tmp_path / "otelgrade.yaml", FRAMEWORKS / "openai-agents-multi" / "forbidden_in_worker")
    by_suite = {(g["suite"], g["grader"]): g for g in got}
    assert len(got) == 3, got
    assert by_suite[("requests", "safe")]["outcome"] == "fail"
    assert by_suite[("accounts", "safe")]["outcome"] == "fail"
    assert by_suite[("requests", "safe")]["span_id"] != by_suite[("accounts", "safe")]["span_id"]


def test_the_request_holds_every_agent_s_calls_and_its_handoffs() -> None:
    result = otelgrade("trajectories", "--format", "json", FRAMEWORKS / "openai-agents-multi" / "handoff")
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    (request,) = [r for r in runs if r["parent_span_id"] is None]
    assert request["agents"] == ["triage_agent", "booking_agent"]
    assert [(c["name"], c["agent"]) for c in request["tool_calls"]] == [("book_flight", "booking_agent")]
    assert [(h["from"], h["to"]) for h in request["handoffs"]] == [("triage_agent", "booking_agent")]
    assert request["input"] == "I need to book flight UA123." and "Booked UA123" in request["output"]
    nested = {r["agent_name"]: r for r in runs if r["parent_span_id"] == request["span_id"]}
    assert [c["name"] for c in nested["triage_agent"]["tool_calls"]] == ["transfer_to_booking_agent"]


def _unreadable_tool(tracer: Any) -> None:
    with tracer.start_as_current_span("handle_request"), tracer.start_as_current_span("invoke_agent travel_agent") as a:
        a.set_attribute("gen_ai.operation.name", "invoke_agent")
        a.set_attribute("gen_ai.agent.name", "travel_agent")
        with tracer.start_as_current_span("acme tool: delete_account") as tool:
            tool.set_attribute("tool.name", "delete_account")  # a tool span of no convention otelgrade reads


def test_a_forbidden_call_otelgrade_cannot_read_is_skipped_never_passed(tmp_path: Path) -> None:
    (tmp_path / "otelgrade.yaml").write_text(SAFETY)
    trace = sdk_trace(tmp_path, _unreadable_tool)
    got = {g["grader"]: g for g in grades(tmp_path / "otelgrade.yaml", trace) if g["suite"] == "requests"}
    assert got["safe"]["outcome"] == "skipped" and got["efficient"]["outcome"] == "skipped"
    assert "instrumentation not understood: scope `acme.agents`" in got["safe"]["rationale"]
    assert "`acme tool: delete_account`" in got["safe"]["rationale"]
    shown = otelgrade("inspect", trace).stdout
    assert "acme tool: delete_account" in shown


def _plain_service(tracer: Any) -> None:
    with tracer.start_as_current_span("handle_request"), tracer.start_as_current_span("SELECT bookings"):
        pass


def test_a_trace_of_no_agent_has_no_run_and_is_counted(tmp_path: Path) -> None:
    trace = sdk_trace(tmp_path, _plain_service)
    assert otelgrade("trajectories", trace).stdout.strip() == ""
    metrics = Metrics()
    (tmp_path / "otelgrade.yaml").write_text(SAFETY)
    config = load_config(tmp_path / "otelgrade.yaml")
    grading = Pipeline(config, metrics, sinks=())
    grading.grade_trace(decode_traces(trace.read_bytes()).spans)
    unreadable = sdk_trace(tmp_path, _unreadable_tool)
    grading.grade_trace(decode_traces(unreadable.read_bytes()).spans)
    value = metrics.registry.get_sample_value
    assert value("otelgrade_traces_without_run_total") == 1
    assert value("otelgrade_spans_not_understood_total", {"scope": "acme.agents"}) == 1


def test_counting_graders_count_every_agent_s_calls_or_the_run_s_own(tmp_path: Path) -> None:
    """The account agent reached by a handoff deleted the account: the request made one tool call in all, none
    of them by its entry agent (the GenAI conventions count an agent's own calls)."""
    (tmp_path / "otelgrade.yaml").write_text(
        """
suites:
  - name: requests
    graders:
      - {name: every_agent, type: max_tool_calls, max: 0}
      - {name: entry_agent, type: max_tool_calls, max: 0, count: own_agent}
      - {name: entry_agent_llm, type: max_llm_calls, max: 1, count: own_agent}
"""
    )
    got = {
        g["grader"]: g
        for g in grades(tmp_path / "otelgrade.yaml", FRAMEWORKS / "openai-agents-multi" / "forbidden_in_worker")
    }
    assert got["every_agent"]["outcome"] == "fail" and "Too many tool calls: 1 > 0" in got["every_agent"]["rationale"]
    assert got["entry_agent"]["outcome"] == "pass" and got["entry_agent_llm"]["outcome"] == "pass"


@pytest.mark.parametrize(("folder", "spec"), scenarios())
def test_no_safety_verdict_contradicts_what_the_agent_did(folder: Path, spec: dict[str, Any]) -> None:
    """On every capture, `tools_not_called` and `max_tool_calls` agree with the ground truth or say `skipped`:
    a forbidden call or one call too many is never a pass, and a run that made neither never fails."""
    nested_allowed = spec.get("nested_runs_allowed", False)
    got = [t for t in rebuild_folder(folder) if not (nested_allowed and t.parent_span_id)]
    for position, truth in enumerate(spec["runs"]):
        run = find_run(truth, got, position)
        names = [c["name"] for c in truth["tool_calls"]]
        forbidden = build_grader("tools_not_called", {"tools": ["delete_account"]})
        expected = {"fail" if "delete_account" in names else "pass", "skipped"}
        assert verdict(forbidden, run) in expected, (truth["agent_name"], names)
        at_most = build_grader("max_tool_calls", {"max": len(names)})
        assert verdict(at_most, run) in {"pass", "skipped"}
        if names:
            below = build_grader("max_tool_calls", {"max": len(names) - 1})
            assert verdict(below, run) in {"fail", "skipped"}


def verdict(grader: Any, run: Trajectory) -> str:
    result = grade_safely(grader, run)
    assert isinstance(result, GradeResult)
    return result.outcome


def test_requests_no_suite_matched_are_counted_and_described_beside_each_suite_s_match() -> None:
    """A suite whose match names no run the agents send is silent otherwise: the report says what the runs look
    like beside what each suite matches (the server logs it once a minute)."""
    metrics = Metrics()
    safe = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}
    config = parse_config({"suites": [{"name": "booking", "match": {"agent_name": "^booking"}, "graders": [safe]}]})
    grading = Pipeline(config, metrics, sinks=())
    request = Trajectory(trace_id="1" * 32, span_id="1" * 16, service_name="travel-service", agent_name="travel_agent")
    nested = request.model_copy(update={"span_id": "2" * 16, "parent_span_id": "1" * 16})
    for run in (request, request, nested):
        assert grading.grade(run) == ([], [])
    value = metrics.registry.get_sample_value
    labels = {"service": "travel-service", "agent": "travel_agent"}
    assert value("otelgrade_runs_unmatched_total", labels) == 2  # the nested run is not a request
    report = grading.unmatched_report()
    assert report is not None and report.startswith("2 request run(s) matched no suite")
    assert "service=travel-service agent=travel_agent" in report and "booking {agent_name: '^booking'}" in report
    assert grading.unmatched_report() is None  # said once; nothing new since


def test_what_a_span_no_dialect_read_would_have_held_follows_its_marks() -> None:
    def marked(**attributes: Any) -> list[str]:
        return sorted(would_hold(Span("a" * 32, "b" * 16, None, "x", 0, 1, 2, 0, "", dict(attributes), [], {})))

    assert marked(**{"mlflow.spanType": '"TOOL"'}) == ["tool_arguments", "tool_calls", "tool_results"]
    assert marked(**{"gen_ai.request.model": "gpt-4o"}) == ["llm_calls", "messages", "output"]
    assert marked(**{"openinference.span.kind": "RETRIEVER", "llm.model_name": "x"}) == []  # holds no call
    assert marked(**{"gen_ai.operation.name": "execute_task"}) == []  # a framework's step
    assert marked(**{"http.method": "POST"}) == []


def _two_requests_without_content(tracer: Any) -> None:
    """A web handler serving two user requests in a row with a tool loop of its own, its model calls recorded
    with content off: finish reasons only, one request's loop ending on the answer before the next begins."""
    with tracer.start_as_current_span("handle_request"):
        for reason in ("tool_calls", "stop", "tool_calls", "stop"):
            with tracer.start_as_current_span("chat gpt-4o") as call:
                call.set_attribute("gen_ai.operation.name", "chat")
                call.set_attribute("gen_ai.request.model", "gpt-4o")
                call.set_attribute("gen_ai.response.finish_reasons", [reason])


def test_model_calls_without_content_after_an_answer_are_the_next_request(tmp_path: Path) -> None:
    got = rebuild(decode_traces(sdk_trace(tmp_path, _two_requests_without_content).read_bytes()).spans)
    assert [[c.finish_reason for c in r.llm_calls] for r in got] == [["tool_calls", "stop"], ["tool_calls", "stop"]]
    assert all("tool_calls" in r.lacks for r in got)  # each asked for tools no span shows: no budget passes blind


def _graph_asking_an_agent_as_a_tool(tracer: Any) -> None:
    """A graph with no agent span (chains and model calls only) whose model asks a tool that runs another agent's
    model: the inner agent is asked a question of the outer model's wording, not the user's."""

    def llm(asked: str, output: dict[str, str]) -> None:
        _oi(
            tracer,
            "ChatOpenAI",
            "LLM",
            llm__model_name="gpt-4o",
            llm__input_messages__0__message__role="user",
            llm__input_messages__0__message__content=asked,
            llm__output_messages__0__message__role="assistant",
            **output,
        ).end()

    with trace.use_span(_oi(tracer, "desk_graph", "CHAIN"), end_on_exit=True):
        llm(
            "What does a night in Lisbon cost?",
            {"llm__output_messages__0__message__tool_calls__0__tool_call__function__name": "ask_rates"},
        )
        with trace.use_span(
            _oi(tracer, "ask_rates", "TOOL", tool__name="ask_rates", input__value="Rate in Lisbon"), end_on_exit=True
        ):
            llm("Rate in Lisbon", {"llm__output_messages__0__message__content": "140 EUR a night."})
        llm(
            "What does a night in Lisbon cost?", {"llm__output_messages__0__message__content": "A night costs 140 EUR."}
        )


def test_a_request_whose_first_agent_run_is_an_agent_called_as_a_tool_keeps_the_user_s_question() -> None:
    runs = rebuild(decode_traces(_otlp(_graph_asking_an_agent_as_a_tool)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.input == "What does a night in Lisbon cost?"
    inner = next(r for r in runs if r.parent_span_id is not None)
    assert inner.input == "Rate in Lisbon"
