"""A delegation whose call leaves no execution on the trace: the member's invocation inside the leader's stands
for it, and control comes back to the leader when the member is done, with no handoff of its own."""

from __future__ import annotations

from typing import Any

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import DONE, QUESTION, _invoke, _otlp
from tests.rebuild.test_rebuild import _chat, parts_calls, parts_user


def _delegation_without_execution(tracer: Any) -> None:
    """A lead's model asks a colleague named in an argument to do the work; no tool span records the call (the
    framework runs the colleague in its place), the colleague's invocation runs inside the lead's, then the lead
    answers."""
    from opentelemetry import trace

    lead = _invoke(tracer, "lead")
    with trace.use_span(lead, end_on_exit=True):
        _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "ask_colleague", {"colleague": "booker"}))])
        member = _invoke(tracer, "booker")
        with trace.use_span(member, end_on_exit=True):
            _chat(tracer, [parts_user("Refund order 7.")], [parts_calls(("c2", "refund", {"order": 7}))])
            _chat(tracer, [parts_user("Refund order 7.")], DONE)
        _chat(tracer, [parts_user(QUESTION)], DONE)


def test_a_member_invoked_inside_its_leader_for_a_call_with_no_execution_hands_nothing_back() -> None:
    runs = rebuild(decode_traces(_otlp(_delegation_without_execution)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.agent_name == "lead" and [c.agent for c in request.llm_calls] == ["lead", "booker", "booker", "lead"]
    assert [t.name for t in request.tool_calls] == ["refund"]
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("lead", "booker")]


def _failed_delegation(tracer: Any, retried: bool) -> None:
    """As above, but the colleague's model fails: the lead's model is told the call failed, and with `retried` the
    framework invokes the lead again inside its first invocation, whose model fails too."""
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode

    def failing_chat() -> None:
        with tracer.start_as_current_span("chat gpt-4o") as s:
            s.set_attribute("gen_ai.operation.name", "chat")
            s.set_attribute("gen_ai.request.model", "gpt-4o")
            s.set_status(Status(StatusCode.ERROR, "model backend unavailable"))

    lead = _invoke(tracer, "lead")
    with trace.use_span(lead, end_on_exit=True):
        _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "ask_colleague", {"colleague": "booker"}))])
        member = _invoke(tracer, "booker")
        with trace.use_span(member, end_on_exit=True):
            failing_chat()
            member.set_status(Status(StatusCode.ERROR, "model backend unavailable"))
        told = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "Error: unavailable"}]}
        _chat(tracer, [parts_user(QUESTION), told], DONE if not retried else [])
        if retried:
            again = _invoke(tracer, "lead")
            with trace.use_span(again, end_on_exit=True):
                failing_chat()


def test_a_delegation_whose_member_failed_is_still_a_handoff_to_the_member_that_acted() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _failed_delegation(t, retried=False))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == []  # no tool call of the request: the lead delegated
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [("lead", "booker", "agent_acted")]


def test_a_delegation_is_found_when_its_caller_runs_again_inside_its_first_invocation() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _failed_delegation(t, retried=True))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == []
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("lead", "booker")]


def _content_off(tracer: Any, crew: bool, result: bool = True) -> None:
    """The delegation above with content capture off: the model calls record only that they ended for tool calls.
    With `crew`, OpenLLMetry's CrewAI spans around it still write the task's description and the crew's answer."""
    from opentelemetry import trace

    def chat(finish: str) -> None:
        with tracer.start_as_current_span("openai.chat") as s:
            s.set_attribute("gen_ai.operation.name", "chat")
            s.set_attribute("gen_ai.request.model", "gpt-4o")
            s.set_attribute("gen_ai.usage.input_tokens", 10)
            s.set_attribute("gen_ai.response.finish_reasons", [finish])

    def lead_and_member() -> None:
        lead = _invoke(tracer, "lead")
        with trace.use_span(lead, end_on_exit=True):
            chat("tool_calls")
            member = _invoke(tracer, "booker")
            with trace.use_span(member, end_on_exit=True):
                chat("tool_calls")
                chat("stop")
            chat("stop")

    if not crew:
        return lead_and_member()
    workflow = {"gen_ai.operation.name": "invoke_agent", **({"crewai.crew.result": "Refunded."} if result else {})}
    task = {"traceloop.span.kind": "task", "crewai.task.description": QUESTION}
    with (
        tracer.start_as_current_span("crewai.workflow", attributes=workflow),
        tracer.start_as_current_span("Refund.task", attributes=task),
    ):
        lead_and_member()
    return None


def test_with_content_off_a_member_invoked_inside_its_leader_after_a_call_for_tools_was_delegated_to() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _content_off(t, crew=False))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("lead", "booker", "nested_invocation")
    ]
    assert "tool_calls" in request.lacks  # which calls were made, the trace cannot say


def test_a_crew_whose_model_calls_record_no_content_still_has_its_request_and_answer_and_lacks_the_rest() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _content_off(t, crew=True))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert (request.input, request.output) == (QUESTION, "Refunded.")
    assert request.lacks == ["messages", "tool_arguments", "tool_results", "tool_calls"]
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("lead", "booker")]


def test_a_crew_whose_model_calls_record_no_content_and_no_span_its_answer_lacks_the_answer() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _content_off(t, crew=True, result=False))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.input == QUESTION and request.output is None
    assert request.lacks == ["output", "messages", "tool_arguments", "tool_results", "tool_calls"]
