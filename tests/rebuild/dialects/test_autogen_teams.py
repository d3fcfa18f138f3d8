"""AutoGen group chats traced with spans only (no event logger, so no model call on the trace): the speakers of one
team's chat are one request, told by the team key AutoGen gives every agent of the chat (`gen_ai.agent.id` is
`type/key`)."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import _otlp


def _speaker(tracer: Any, name: str, team: str) -> Any:
    span = tracer.start_span(f"invoke_agent {name}")
    span.set_attribute("gen_ai.operation.name", "invoke_agent")
    span.set_attribute("gen_ai.system", "autogen")
    span.set_attribute("gen_ai.agent.name", name)
    span.set_attribute("gen_ai.agent.id", f"{name}_{team}/{team}")
    return span


def _group_chat(second_team: str) -> Any:
    """A front desk speaks (no tool), then the selector gives the turn to `accounts`, which deletes an account:
    each speaker's invocation under a message-delivery span of its own, under the application's span."""

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            with (
                tracer.start_as_current_span("deliver front_desk"),
                trace.use_span(_speaker(tracer, "front_desk", "t-1"), end_on_exit=True),
            ):
                tracer.start_span("publish reply").end()  # its answer, sent to the chat
            with (
                tracer.start_as_current_span("deliver accounts"),
                trace.use_span(_speaker(tracer, "accounts", second_team), end_on_exit=True),
            ):
                tool = tracer.start_span("execute_tool delete_account")
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.system", "autogen")
                tool.set_attribute("gen_ai.tool.name", "delete_account")
                tool.end()

    return build


def test_the_speakers_of_one_team_s_chat_are_one_request_when_no_model_call_is_on_the_trace() -> None:
    runs = rebuild(decode_traces(_otlp(_group_chat("t-1"))).spans)
    requests = [r for r in runs if r.parent_span_id is None]
    assert len(requests) == 1  # the delete is in the request a safety grader sees
    (request,) = requests
    assert request.agent_name == "front_desk"
    assert [t.name for t in request.tool_calls] == ["delete_account"]
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("front_desk", "accounts")]
    assert "llm_calls" in request.lacks


def test_speakers_of_different_teams_stay_requests_of_their_own() -> None:
    runs = rebuild(decode_traces(_otlp(_group_chat("t-2"))).spans)
    assert sorted(r.agent_name or "" for r in runs if r.parent_span_id is None) == ["accounts", "front_desk"]
