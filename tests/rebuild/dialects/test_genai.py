"""OpenTelemetry GenAI semantic conventions, read off a real capture: every model and tool call its ground truth
records is on a span, and the parts this dialect owns read as they were (`tests/fixtures/frameworks/google-adk`)."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture
from tests.rebuild.test_handoffs import _execute, _otlp
from tests.rebuild.test_rebuild import _chat


def test_the_capture_reads_as_its_ground_truth_says() -> None:
    assert_reads_the_ground_truth(read_capture("google-adk", "genai", "frameworks"), reads="llm tool agent")


def _said_by(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def _workflow_asking_a_tool(tracer: Any) -> None:
    """An agent loop whose instrumentation writes the model's messages under a role it does not map (`unknown`,
    as OpenLLMetry's LangChain instrumentation does for a streamed AI message): a tool call, then the answer."""
    ask = {"type": "tool_call", "id": "c1", "name": "meter_reading", "arguments": {"meter_id": "M-1"}}
    user = _said_by("user", {"type": "text", "content": "Is meter M-1 broken?"})
    result = _said_by("tool", {"type": "tool_call_response", "id": "c1", "response": "reading 0 kWh"})
    answer = "Meter M-1 reads nothing; it looks broken."
    with tracer.start_as_current_span("invoke_agent outage_desk") as desk:
        desk.set_attribute("gen_ai.operation.name", "invoke_agent")
        desk.set_attribute("gen_ai.agent.name", "outage_desk")
        _chat(tracer, [user], [_said_by("unknown", ask)])
        with trace.use_span(_execute(tracer, "meter_reading", "c1", "reading 0 kWh"), end_on_exit=True):
            pass
        _chat(
            tracer,
            [user, _said_by("unknown", ask), result],
            [_said_by("unknown", {"type": "text", "content": answer})],
        )


def test_a_model_s_messages_under_a_role_nobody_mapped_are_the_assistant_s() -> None:
    """What a model call outputs is the model's, and a message asking for tools is the model's, whatever role the
    instrumentation wrote: the answer is the run's output and the conversation says who spoke."""
    (run,) = rebuild(decode_traces(_otlp(_workflow_asking_a_tool)).spans)
    assert run.output == "Meter M-1 reads nothing; it looks broken."
    assert [m["role"] for m in run.messages] == ["user", "assistant", "tool", "assistant"]
    assert [t.name for t in run.tool_calls] == ["meter_reading"]
