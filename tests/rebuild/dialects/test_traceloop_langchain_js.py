"""OpenLLMetry JS's LangChain tool spans: named after the tool's class, the tool's own identity only in the
ToolMessage (or the LangGraph `Command` holding it) the tool returned."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from otelgrade.core.spans import Event, Span
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialects.traceloop import read
from otelgrade.rebuild.facts import ToolFacts
from tests.rebuild.genai_spans import chat, span


def _serialized(kind: str, **fields: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", kind], "kwargs": fields}


def _reply(name: str, call_id: str, content: str, status: str = "success") -> dict[str, Any]:
    return _serialized("ToolMessage", status=status, content=content, tool_call_id=call_id, name=name)


def _route(giver: str, tool: str, call_id: str, taker: str) -> dict[str, Any]:
    asked = _serialized("AIMessage", name=giver, content="", tool_calls=[{"name": tool, "args": {}, "id": call_id}])
    update = {"messages": [asked, _reply(tool, call_id, f"Caller routed to {taker}")], "activeAgent": taker}
    return {"lg_name": "Command", "update": update, "goto": [taker]}


def _execution(span_id: str, start: int, arguments: str, output: dict[str, Any] | None) -> Span:
    attrs: dict[str, Any] = {"traceloop__entity__input": json.dumps({"args": [arguments]})}
    if output is not None:
        attrs["traceloop__entity__output"] = json.dumps(output)
    return span(
        span_id,
        "1",
        "execute_tool DynamicStructuredTool",
        start,
        start + 1,
        traceloop__span__kind="task",
        gen_ai__operation__name="execute_tool",
        traceloop__entity__name="DynamicStructuredTool",
        **attrs,
    )


def test_a_tool_is_known_by_the_tool_message_it_returned_not_by_its_class() -> None:
    facts = read(_execution("2", 0, '{"policy_id": "PX-1"}', _reply("lookup_policy", "call_2", "home cover")))
    assert isinstance(facts, ToolFacts)
    assert (facts.name, facts.call_id, facts.result, facts.error) == ("lookup_policy", "call_2", "home cover", False)


def test_a_tool_that_returns_a_graph_command_hands_control_to_the_node_it_goes_to() -> None:
    facts = read(_execution("2", 0, "{}", _route("phone_line", "route_to_assessor", "call_1", "assessor")))
    assert isinstance(facts, ToolFacts)
    assert (facts.name, facts.call_id, facts.result) == ("route_to_assessor", "call_1", "Caller routed to assessor")
    assert (facts.hands_to, facts.handed_from) == ("assessor", "phone_line")


def test_a_tool_that_raised_and_returned_nothing_failed_whatever_its_status() -> None:
    raised = Event("exception", 0, {"exception.type": "Error", "exception.message": "payout limit exceeded"})
    execution = replace(_execution("2", 0, '{"amount": 2400}', None), status_code=1, events=[raised])
    facts = read(execution)
    assert isinstance(facts, ToolFacts)
    assert (facts.result, facts.error) == (None, True)


def test_model_calls_that_name_no_agent_belong_to_the_agents_the_graph_routes_to() -> None:
    """A swarm whose spans all sit flat under the application's span, its model calls naming no agent: the
    handoff is the call whose Command routes the graph, from the agent whose message asked for it, and each model
    call is the agent's the graph last routed to."""

    def answer(content: str) -> str:
        return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": content}]}])

    asked = [{"role": "user", "content": "File a claim on PX-1."}]
    calls = {"gen_ai__output__messages": answer(""), "gen_ai__response__finish_reasons": ["tool_call"]}
    spans = [
        span("1", None, "handle_request.workflow", 0, 30, traceloop__span__kind="workflow"),
        chat("3", "1", 1, 2, asked, **calls),
        _execution("4", 3, "{}", _route("phone_line", "route_to_assessor", "call_1", "assessor")),
        chat("5", "1", 5, 6, asked, **calls),
        _execution("6", 7, '{"policy_id": "PX-1"}', _reply("file_claim", "call_2", "claim C-1 filed")),
        chat("7", "1", 9, 10, asked, gen_ai__output__messages=answer("Claim C-1 is filed.")),
    ]
    (run,) = rebuild(spans)
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in run.handoffs] == [("phone_line", "assessor", "dialect")]
    assert [c.agent for c in run.llm_calls] == ["phone_line", "assessor", "assessor"]
    assert [(c.name, c.result) for c in run.tool_calls] == [("file_claim", "claim C-1 filed")]
    assert run.lacks == []


def test_a_run_whose_tool_raised_under_its_class_name_lacks_its_tool_calls() -> None:
    """The tool that raised returned no ToolMessage: the span names only its class, so which tool ran is not on
    the trace, and a grader of the run's tool calls must not judge the class's name."""
    raised = Event("exception", 0, {"exception.type": "Error", "exception.message": "payout limit exceeded"})
    asked = [{"role": "user", "content": "Pay my claim out."}]
    said = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "I could not pay it out."}]}])
    spans = [
        span("1", None, "handle_request.workflow", 0, 30, traceloop__span__kind="workflow"),
        chat("3", "1", 1, 2, asked, gen_ai__response__finish_reasons=["tool_call"]),
        replace(_execution("4", 3, '{"amount": 2400}', None), events=[raised]),
        chat("5", "1", 5, 6, asked, gen_ai__output__messages=said),
    ]
    (run,) = rebuild(spans)
    assert [(c.name, c.error) for c in run.tool_calls] == [("DynamicStructuredTool", True)]
    assert "tool_calls" in run.lacks
