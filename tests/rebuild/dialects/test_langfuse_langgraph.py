"""A LangGraph supervisor under the Langfuse SDK's LangChain handler: the run metadata it records
(`langfuse.observation.metadata.*`) says which node each observation runs, whom a handoff tool hands to and the
call id; the handler types an observation `agent` by its name, so a graph's `agent` node is a step, not an agent."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialects.langfuse import read
from otelgrade.rebuild.facts import ToolFacts
from tests.rebuild.genai_spans import span

META = "langfuse__observation__metadata__"


def _observation(sid: str, parent: str | None, name: str, kind: str, at: int, end: int, **attrs: Any) -> Span:
    return span(sid, parent, name, at, end, langfuse__observation__type=kind, **attrs)


def _node(sid: str, parent: str | None, name: str, kind: str, at: int, end: int, **attrs: Any) -> Span:
    """An observation of LangGraph node `name` (the handler records the node in the run's metadata)."""
    return _observation(sid, parent, name, kind, at, end, **{f"{META}langgraph_node": name}, **attrs)


def _generation(sid: str, parent: str, at: int, said: dict[str, Any]) -> Span:
    """A model call whose answer is `said`, LangChain's tool calls as `{name, args, id}`."""
    return _observation(
        sid,
        parent,
        "ChatOpenAI",
        "generation",
        at,
        at + 1,
        langfuse__observation__model__name="gpt-4o-mini",
        langfuse__observation__output=json.dumps({"role": "assistant", **said}),
    )


def _tool(sid: str, parent: str, name: str, at: int, given: str, output: Any, call_id: str, **attrs: Any) -> Span:
    """A tool run by LangGraph's tool node: its input as the handler writes it, its output, the call id."""
    return _observation(
        sid,
        parent,
        name,
        "tool",
        at,
        at + 1,
        langfuse__observation__input=given,
        langfuse__observation__output=json.dumps(output),
        **{f"{META}tool_call_id": call_id},
        **attrs,
    )


def _asks(name: str, call_id: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "args": args, "id": call_id, "type": "tool_call"}]}


def _handed_back(answer: str) -> list[dict[str, Any]]:
    """A worker's messages as its graph returns them: its model's answer, then the pair the supervisor library
    adds itself to hand control back."""
    back = {"__is_handoff_back": True}
    call = {"name": "transfer_back_to_coordinator", "args": {}, "id": "b1", "type": "tool_call"}
    return [
        {"type": "human", "content": "Is M-1 broken?"},
        {"type": "ai", "content": answer, "response_metadata": {"finish_reason": "stop"}},
        {"type": "ai", "content": "Transferring back to coordinator", "response_metadata": back, "tool_calls": [call]},
        {"type": "tool", "content": "Successfully transferred back", "response_metadata": back, "tool_call_id": "b1"},
    ]


def _supervisor() -> list[Span]:
    """`coordinator` hands the request to `meter_desk` with a tool named after neither, whose metadata says where
    it goes; the desk reads a meter and answers; the coordinator answers the user."""
    command = {"graph": "__parent__", "update": {"messages": []}, "goto": "meter_desk"}
    reading = {"content": "M-1: 0 kWh", "type": "tool", "tool_call_id": "c2", "status": "success"}
    return [
        _observation(
            "1",
            None,
            "coordinator",
            "chain",
            0,
            20,
            langfuse__observation__input=json.dumps({"messages": [{"role": "user", "content": "Is M-1 broken?"}]}),
        ),
        _node("2", "1", "coordinator", "chain", 1, 5),
        _node("3", "2", "agent", "agent", 1, 3),
        _generation("4", "3", 1, _asks("send_over", "c1", {})),
        _node("5", "2", "tools", "chain", 3, 5),
        _tool("6", "5", "send_over", 3, "{}", command, "c1", **{f"{META}__handoff_destination": "meter_desk"}),
        _node("7", "1", "meter_desk", "chain", 6, 14),
        _observation(
            "8",
            "7",
            "call_agent",
            "agent",
            6,
            14,
            langfuse__observation__output=json.dumps({"messages": _handed_back("M-1 reads 0 kWh: broken.")}),
            **{f"{META}langgraph_node": "meter_desk"},
        ),
        _node("9", "8", "agent", "agent", 6, 8),
        _generation("a", "9", 6, _asks("read_meter", "c2", {"meter_id": "M-1"})),
        _node("b", "8", "tools", "chain", 8, 10),
        _tool("c", "b", "read_meter", 8, "{'meter_id': 'M-1'}", reading, "c2"),
        _node("d", "8", "agent", "agent", 10, 12),
        _generation("e", "d", 10, {"content": "M-1 reads 0 kWh: broken."}),
        _node("f", "1", "coordinator", "chain", 15, 19),
        _node("g", "f", "agent", "agent", 15, 18),
        _generation("h", "g", 15, {"content": "Your meter M-1 is broken; we will replace it."}),
    ]


def test_a_handoff_tool_whose_metadata_names_its_destination_is_a_handoff() -> None:
    (request,) = [r for r in rebuild(_supervisor()) if r.parent_span_id is None]
    assert request.agent_name == "coordinator"
    handoffs = [(h.from_agent, h.to_agent) for h in request.handoffs]
    assert handoffs == [("coordinator", "meter_desk"), ("meter_desk", "coordinator")]
    assert request.handoffs[0].decided_by == "dialect"
    assert [(t.name, t.arguments, t.result) for t in request.tool_calls] == [
        ("read_meter", {"meter_id": "M-1"}, "M-1: 0 kWh")
    ]
    assert len(request.llm_calls) == 4
    assert request.output == "Your meter M-1 is broken; we will replace it."


def test_the_agent_running_a_node_is_named_by_the_node_and_the_graph_s_agent_node_is_a_step() -> None:
    runs = {r.agent_name: r for r in rebuild(_supervisor())}
    assert "agent" not in runs
    assert [t.name for t in runs["meter_desk"].tool_calls] == ["read_meter"]


def test_a_worker_s_answer_is_its_model_s_not_the_message_its_graph_adds_to_hand_back() -> None:
    runs = {r.agent_name: r for r in rebuild(_supervisor())}
    assert runs["meter_desk"].output == "M-1 reads 0 kWh: broken."


def test_a_tool_message_returned_with_an_error_status_is_a_failed_call() -> None:
    """LangGraph's tool node returns a failure to the model as a ToolMessage of status `error`."""
    failed = {"content": "fee ledger sealed", "type": "tool", "tool_call_id": "c9", "status": "error"}
    facts = read(_observation("1", None, "waive_fee", "tool", 0, 1, langfuse__observation__output=json.dumps(failed)))
    assert isinstance(facts, ToolFacts)
    assert (facts.call_id, facts.result, facts.error) == ("c9", "fee ledger sealed", True)


def test_a_tool_that_returned_a_command_to_another_node_hands_to_it() -> None:
    """Without the destination in the metadata, the graph `Command` the tool returned says where control goes."""
    command = {"graph": "__parent__", "update": {"messages": []}, "goto": "billing_desk"}
    facts = read(_observation("1", None, "pass_on", "tool", 0, 1, langfuse__observation__output=json.dumps(command)))
    assert isinstance(facts, ToolFacts)
    assert facts.hands_to == "billing_desk"
