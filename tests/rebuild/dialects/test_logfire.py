"""Pydantic Logfire's spans rebuilt from real captures (`tests/capture/logfire-*`), as their ground truth says."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otelgrade.core.trajectory import Trajectory
from otelgrade.rebuild.dialects import classify
from tests.captures import load_folder, rebuild_folder
from tests.paths import FIXTURES

FRAMEWORKS = FIXTURES / "frameworks"


def expected(source: str, scenario: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((FRAMEWORKS / source / "expected.json").read_text())["scenarios"][scenario]
    return spec


def request_runs(source: str, scenario: str) -> list[Trajectory]:
    """The runs a user's request made (nested agents' own runs left out)."""
    return [t for t in rebuild_folder(FRAMEWORKS / source / scenario) if t.parent_span_id is None]


def assert_as_ground_truth(run: Trajectory, truth: dict[str, Any]) -> None:
    assert run.agent_name == truth["agent_name"]
    assert run.input == truth["input"]
    assert run.output == truth["output"]
    assert run.status == truth["status"]
    assert len(run.llm_calls) == truth["llm_calls"]
    assert [(c.name, c.arguments, c.error) for c in run.tool_calls] == [
        (c["name"], c["arguments"], c["error"]) for c in truth["tool_calls"]
    ]
    assert [c.result for c in run.tool_calls if not c.error] == [
        c["result"] for c in truth["tool_calls"] if not c["error"]
    ]


AGENTS_SINGLE = ["happy", "forbidden", "tool_error", "many_calls", "parallel", "agent_error", "two_runs"]


@pytest.mark.parametrize("scenario", AGENTS_SINGLE)
def test_openai_agents_runs_are_the_ground_truth(scenario: str) -> None:
    truth = expected("logfire-openai-agents", scenario)["runs"]
    runs = request_runs("logfire-openai-agents", scenario)
    assert len(runs) == len(truth)
    for run, run_truth in zip(runs, truth, strict=True):
        assert run.source == "logfire"
        assert_as_ground_truth(run, run_truth)


def test_openai_agents_model_calls_carry_the_conversation_and_usage() -> None:
    (run,) = request_runs("logfire-openai-agents", "happy")
    first, last = run.llm_calls[0], run.llm_calls[-1]
    assert (first.model, first.provider, first.input_tokens, first.output_tokens) == ("gpt-4o-mini", "openai", 60, 12)
    assert [m["role"] for m in first.input_messages] == ["system", "user"]
    assert first.output_messages[0]["tool_calls"][0]["function"]["name"] == "search_flights"
    assert last.input_messages[-1] == {"role": "tool", "content": "booked ABC123456", "tool_call_id": "call_2_0"}


def test_openai_agents_failed_function_is_a_failed_tool_call() -> None:
    (run,) = request_runs("logfire-openai-agents", "tool_error")
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.error) == ("charge_card", {"amount": 120}, True)


def test_openai_agents_handoff_is_one_request_with_a_handoff() -> None:
    """triage_agent hands over to booking_agent: the request holds every model call and the booking call, the
    transfer is a handoff; each agent's own run is nested under the request."""
    (truth,) = expected("logfire-openai-agents", "handoff")["runs"]
    everything = rebuild_folder(FRAMEWORKS / "logfire-openai-agents" / "handoff")
    (request,) = [t for t in everything if t.parent_span_id is None]
    assert_as_ground_truth(request, truth)
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("triage_agent", "booking_agent")]
    nested = {t.agent_name: t for t in everything if t.parent_span_id == request.span_id}
    assert set(nested) == {"triage_agent", "booking_agent"}
    assert nested["booking_agent"].output == truth["output"]


def test_openai_agents_agent_as_tool_is_a_tool_call_and_a_nested_run() -> None:
    """orchestrator_agent calls booking_agent through `as_tool`: the agent tool is a tool call of the request,
    followed by the booking agent's own call; booking_agent's run is nested under the orchestrator's."""
    (truth,) = expected("logfire-openai-agents", "agent_as_tool")["runs"]
    everything = rebuild_folder(FRAMEWORKS / "logfire-openai-agents" / "agent_as_tool")
    (request,) = [t for t in everything if t.parent_span_id is None]
    assert_as_ground_truth(request, truth)
    (booking,) = [t for t in everything if t.agent_name == "booking_agent"]
    assert booking.parent_span_id is not None
    assert (booking.input, booking.output) == ("Book flight UA123.", "Booked UA123. Confirmation: ABC123456")
    assert [c.name for c in booking.tool_calls] == ["book_flight"]


@pytest.mark.parametrize(("source", "provider"), [("logfire-openai", "openai"), ("logfire-anthropic", "anthropic")])
def test_provider_calls_are_model_calls_with_their_messages(source: str, provider: str) -> None:
    """`instrument_openai()` / `instrument_anthropic()` spans (GenAI attributes, no agent span) are read by this
    dialect: the loop's tool calls are the model's requests, results from the next request's messages."""
    (truth,) = expected(source, "happy")["runs"]
    (run,) = request_runs(source, "happy")
    assert {c.provider for c in run.llm_calls} == {provider}
    assert run.input == truth["input"]
    assert run.output == truth["output"]
    assert len(run.llm_calls) == truth["llm_calls"]
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        (c["name"], c["arguments"], c["result"]) for c in truth["tool_calls"]
    ]


def test_spans_are_read_by_this_dialect_by_their_template() -> None:
    """Every Logfire LLM, agent and function span is this dialect's; user spans (`handle_request`, a function
    wrapped with `@logfire.instrument`) are left unread."""
    spans, _ = load_folder(FRAMEWORKS / "logfire-openai-agents" / "handoff")
    read = {s.name: (c.dialect, type(c.facts).__name__) if (c := classify(s)) else None for s in spans}
    assert read["Agent run: {name!r}"] == ("logfire", "RunFacts")
    assert read["Chat completion with {gen_ai.request.model!r}"] == ("logfire", "LLMFacts")
    assert read["Function: {name}"] == ("logfire", "ToolFacts")
    assert read["OpenAI Agents trace: {name}"] == ("logfire", "ChainFacts")
    assert read["handle_request"] is None
    spans, _ = load_folder(FRAMEWORKS / "logfire-openai" / "happy")
    read = {s.name: (c.dialect, type(c.facts).__name__) if (c := classify(s)) else None for s in spans}
    assert read["Chat Completion with {request_data[model]!r}"] == ("logfire", "LLMFacts")
    assert read["Calling tool_loop.search_flights"] is None
