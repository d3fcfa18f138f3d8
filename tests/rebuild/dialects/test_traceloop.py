"""OpenLLMetry (Traceloop), read off a real capture (`tests/fixtures/frameworks/langgraph-traceloop`): every
model and tool call its ground truth records is on a span, and the parts this dialect owns read as they were."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialects.traceloop import read
from otelgrade.rebuild.facts import ChainFacts, RunFacts, ToolFacts, TransferFacts
from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture
from tests.rebuild.genai_spans import chat as genai_chat
from tests.rebuild.genai_spans import span


def test_the_capture_reads_as_its_ground_truth_says() -> None:
    assert_reads_the_ground_truth(read_capture("langgraph-traceloop", "traceloop", "frameworks"), reads="tool agent")


def test_a_tool_span_with_genai_arguments_and_result_reads_them() -> None:
    """The openai-agents instrumentation's tool spans carry GenAI's call attributes, not `traceloop.entity.*`."""
    facts = read(
        span(
            "1",
            None,
            "reserve_room.tool",
            0,
            1,
            traceloop__span__kind="tool",
            gen_ai__tool__name="reserve_room",
            gen_ai__tool__call__arguments='{"hotel_id": "H-77", "nights": 3}',
            gen_ai__tool__call__result="reserved H-77",
        )
    )
    assert isinstance(facts, ToolFacts)
    assert (facts.name, facts.arguments, facts.result) == (
        "reserve_room",
        {"hotel_id": "H-77", "nights": 3},
        "reserved H-77",
    )


def test_a_handoff_span_states_the_transfer_from_its_agent() -> None:
    handoff = span(
        "1", None, "desk → unknown.handoff", 0, 1, traceloop__span__kind="handoff", gen_ai__handoff__from_agent="desk"
    )
    assert read(handoff) == TransferFacts(to_agent=None, from_agent="desk")


def test_an_agno_team_is_named_by_its_team_name_not_its_span_name() -> None:
    team = span(
        "1", None, "claims_router.team", 0, 1, traceloop__span__kind="workflow", agno__team__name="claims_router"
    )
    facts = read(team)
    assert isinstance(facts, RunFacts)
    assert facts.agent_name == "claims_router"


def _agno_tool(output: str) -> ToolFacts:
    facts = read(
        span("1", None, "issue_payout.tool", 0, 1, traceloop__span__kind="tool", traceloop__entity__output=output)
    )
    assert isinstance(facts, ToolFacts)
    return facts


def test_an_agno_execution_result_that_failed_is_an_error_on_a_span_left_unset() -> None:
    facts = _agno_tool(
        "status='failure' result=None error='payout rail offline' updated_session_state=None images=None files=None"
    )
    assert (facts.error, facts.result) == (True, None)


def test_an_agno_execution_result_that_succeeded_gives_what_the_tool_returned() -> None:
    facts = _agno_tool("status='success' result='account 42 deleted' error=None updated_session_state=None files=None")
    assert (facts.error, facts.result) == (False, "account 42 deleted")


def test_a_crewai_task_is_a_step_given_its_description_and_the_crew_answers_with_its_result() -> None:
    task = span(
        "1", None, "Where is MSKU-7?.task", 0, 1, traceloop__span__kind="task", crewai__task__description="Where?"
    )
    assert read(task) == ChainFacts(input="Where?")
    crew = span(
        "2", None, "crewai.workflow", 0, 1, gen_ai__operation__name="invoke_agent", crewai__crew__result="At sea."
    )
    facts = read(crew)
    assert isinstance(facts, RunFacts)
    assert facts.output == "At sea."


def test_a_llamaindex_workflow_tool_step_is_the_tool_call_with_its_outcome() -> None:
    outcome = {
        "tool_name": "issue_credit",
        "tool_id": "call_9",
        "tool_output": {"raw_output": "ledger locked", "is_error": True},
    }
    step = span(
        "1",
        None,
        "BaseWorkflowAgent.task",
        0,
        1,
        traceloop__span__kind="task",
        tool__name="issue_credit",
        tool__arguments='{"invoice_id": "INV-301"}',
        traceloop__entity__output=json.dumps(outcome),
    )
    facts = read(step)
    assert isinstance(facts, ToolFacts)
    assert (facts.name, facts.call_id, facts.arguments, facts.result, facts.error) == (
        "issue_credit",
        "call_9",
        {"invoice_id": "INV-301"},
        "ledger locked",
        True,
    )


def test_the_first_agent_of_a_llamaindex_workflow_is_the_one_its_first_step_is_for() -> None:
    """OpenLLMetry's LlamaIndex instrumentation writes one span for the whole agent workflow and none per agent;
    each step's event, in its JSON input or output, says which agent it is for (`current_agent_name`). The handoff
    found from the model taking other instructions comes from that agent, not from an unnamed one."""

    def step(span_id: str, start: int, speaker: str) -> Span:
        event = {"input": [{"role": "user", "content": "Close e-5."}], "current_agent_name": speaker}
        return span(
            span_id,
            "1",
            "AgentWorkflow.task",
            start,
            start + 1,
            traceloop__span__kind="task",
            traceloop__entity__input=json.dumps(event),
        )

    def chat(span_id: str, start: int, system: str, answer: dict[str, Any]) -> Span:
        asked = [{"role": "system", "content": system}, {"role": "user", "content": "Close e-5."}]
        return genai_chat(span_id, "1", start, start + 1, asked, gen_ai__output__messages=json.dumps([answer]))

    asked = {"name": "handoff", "arguments": '{"to_agent": "desk_b"}'}
    handoff = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": asked}]}
    outcome = {"tool_id": "c1", "tool_output": {"raw_output": "Agent desk_b is now handling the request."}}
    spans = [
        span("1", None, "AgentWorkflow.workflow", 0, 20, traceloop__span__kind="workflow"),
        step("2", 1, "desk_a"),
        chat("3", 2, "You are the front desk.", handoff),
        span(
            "4",
            "1",
            "AgentWorkflow.task",
            4,
            5,
            traceloop__span__kind="task",
            tool__name="handoff",
            tool__arguments='{"to_agent": "desk_b"}',
            traceloop__entity__output=json.dumps(outcome),
        ),
        step("5", 6, "desk_b"),
        chat("6", 7, "You are the billing desk.", {"role": "assistant", "content": "Account e-5 is closed."}),
    ]
    (run,) = rebuild(spans)
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("desk_a", "desk_b")]
    assert run.tool_calls == []
