"""OpenLIT's spans rebuilt from real captures of a LangGraph supervisor (`tests/capture/langgraph-supervisor-openlit`),
as their ground truth says."""

from __future__ import annotations

import json

import pytest

from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import ChainFacts, RunFacts, ToolFacts
from tests.captures import load_folder, rebuild_folder
from tests.rebuild.dialects.test_logfire import FRAMEWORKS, assert_as_ground_truth, expected, request_runs

SOURCE = "langgraph-supervisor-openlit"
SUPERVISOR_SCENARIOS = ["happy", "forbidden", "two_workers", "tool_error", "agent_error"]


@pytest.mark.parametrize("scenario", SUPERVISOR_SCENARIOS)
def test_the_request_run_is_the_ground_truth(scenario: str) -> None:
    """The supervisor graph's run holds every agent's model calls and the workers' tool calls, not the
    transfers; it answers what the supervisor told the user."""
    (truth,) = expected(SOURCE, scenario)["runs"]
    (run,) = request_runs(SOURCE, scenario)
    assert run.source == "openlit"
    assert_as_ground_truth(run, truth)
    assert "transfer_to_" not in " ".join(c.name for c in run.tool_calls)


def test_each_worker_run_is_nested_under_the_request_with_its_own_calls() -> None:
    everything = rebuild_folder(FRAMEWORKS / SOURCE / "two_workers")
    (request,) = [t for t in everything if t.parent_span_id is None]
    nested = [t for t in everything if t.parent_span_id == request.span_id]
    assert [(t.agent_name, [c.name for c in t.tool_calls], len(t.llm_calls), t.output) for t in nested] == [
        ("flights_agent", ["search_flights"], 2, "UA123 at 09:00 for $320."),
        ("weather_agent", ["get_weather"], 2, "Paris: 12C and rain."),
    ]
    (truth,) = expected(SOURCE, "two_workers")["runs"]
    assert [{"from": h.from_agent, "to": h.to_agent} for h in request.handoffs] == truth["handoffs"]


def test_graph_nodes_are_steps_and_the_graph_is_the_run() -> None:
    """OpenLIT names every LangGraph node, and LangChain's chain of the ReAct model node, `invoke_agent`."""
    spans, _ = load_folder(FRAMEWORKS / SOURCE / "happy")
    facts = {}
    for span in spans:
        classified = classify(span)
        if classified is not None:
            facts.setdefault((span.scope.rsplit(".", 1)[-1], span.name), set()).add(type(classified.facts))
    assert facts[("langgraph", "invoke_workflow supervisor")] == {RunFacts}
    assert facts[("langgraph", "invoke_agent agent")] == {ChainFacts}
    assert facts[("langgraph", "invoke_agent flights_agent")] == {ChainFacts}
    assert facts[("langchain", "invoke_agent agent")] == {ChainFacts}
    assert facts[("langchain", "invoke_agent flights_agent")] == {RunFacts}
    assert facts[("langchain", "execute_tool search_flights")] == {ToolFacts}


def test_a_tool_span_is_read_through_langchains_reprs() -> None:
    """Arguments are a dict's Python repr and the result a ToolMessage's repr; a failed tool keeps the
    LangChain run id (a UUID) as its call id, which is no call id: it still meets the model's request."""
    spans, _ = load_folder(FRAMEWORKS / SOURCE / "tool_error")
    (charge,) = [s for s in spans if s.name == "execute_tool charge_card"]
    assert charge.attributes["gen_ai.tool.call.arguments"] == "{'amount': 120}"
    classified = classify(charge)
    assert classified is not None and isinstance(classified.facts, ToolFacts)
    assert (classified.facts.arguments, classified.facts.call_id, classified.facts.error) == (
        {"amount": 120},
        None,
        True,
    )
    (run,) = request_runs(SOURCE, "tool_error")
    assert [(c.name, c.call_id, c.error) for c in run.tool_calls] == [("charge_card", "call_18_0", True)]
    (search,) = [s for s in load_folder(FRAMEWORKS / SOURCE / "happy")[0] if s.name == "execute_tool search_flights"]
    assert search.attributes["gen_ai.tool.call.result"].startswith("content='UA123")
    classified = classify(search)
    assert classified is not None and isinstance(classified.facts, ToolFacts)
    assert classified.facts.result == expected(SOURCE, "happy")["runs"][0]["tool_calls"][0]["result"]


def test_a_failed_graph_run_is_still_the_request() -> None:
    """A graph run that failed has no `gen_ai.operation.name`: its span name says what it is."""
    spans, _ = load_folder(FRAMEWORKS / SOURCE / "agent_error")
    (graph,) = [s for s in spans if s.name == "invoke_workflow supervisor"]
    assert "gen_ai.operation.name" not in graph.attributes
    (run,) = request_runs(SOURCE, "agent_error")
    assert (run.agent_name, run.span_id, run.status, run.output) == ("supervisor", graph.span_id, "error", None)


def test_graph_construction_at_start_up_is_no_run() -> None:
    assert rebuild_folder(FRAMEWORKS / SOURCE / "startup") == []


REDACTED = "openlit-langgraph-redacted"  # content off: the run lacks the conversation and the results


@pytest.mark.parametrize("scenario", ["happy", "two_workers"])
def test_content_off_still_shows_the_request_the_requested_calls_and_the_answer(scenario: str) -> None:
    """With capture_message_content=False OpenLIT keeps the user's request on the graph's first node span, the
    response's tool calls on the model-call span and the answer on the graph's span; tool results are gone."""
    (truth,) = expected(REDACTED, scenario)["runs"]
    (run,) = request_runs(REDACTED, scenario)
    assert run.input == truth["input"] and "input" not in run.lacks
    assert [(c.name, c.arguments) for c in run.tool_calls] == [(c["name"], c["arguments"]) for c in truth["tool_calls"]]
    assert [c.result for c in run.tool_calls] == [None] * len(truth["tool_calls"]) and "tool_results" in run.lacks
    assert (run.output, len(run.llm_calls)) == (truth["output"], truth["llm_calls"])
    assert all(not call.input_messages for call in run.llm_calls)


@pytest.mark.parametrize("scenario", ["booking_handoff", "bookings_failure", "close_account", "reserve_then_refund"])
def test_a_swarm_s_handoff_tool_sends_the_graph_on_by_its_command_and_is_no_tool_call(scenario: str) -> None:
    """LangGraph's swarm under OpenLIT: the handoff tool's result is the `Command` that sends the graph to the
    next agent (`goto`). Its tool calls are the ground truth's, within the run's budget; the handoffs go where
    the ground truth says, and since no span shows which agent made which model call, the run lacks tool_calls
    rather than passing or failing on a guess."""
    folder = FRAMEWORKS / "langgraph-swarm-openlit"
    truth = json.loads((folder / "expected.pending.json").read_text())["scenarios"][scenario]["runs"][0]
    (run,) = [t for t in rebuild_folder(folder / scenario) if t.parent_span_id is None]
    assert [c.name for c in run.tool_calls] == [c["name"] for c in truth["tool_calls"]]
    assert [h.to_agent for h in run.handoffs] == [h["to"] for h in truth["handoffs"]]
    assert all(h.decided_by == "dialect" for h in run.handoffs) and "tool_calls" in run.lacks
