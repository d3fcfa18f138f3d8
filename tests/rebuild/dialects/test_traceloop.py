"""OpenLLMetry (Traceloop), read off a real capture (`tests/fixtures/frameworks/langgraph-traceloop`): every
model and tool call its ground truth records is on a span, and the parts this dialect owns read as they were."""

from __future__ import annotations

from otelgrade.rebuild.dialects.traceloop import read
from otelgrade.rebuild.facts import ToolFacts, TransferFacts
from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture
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
