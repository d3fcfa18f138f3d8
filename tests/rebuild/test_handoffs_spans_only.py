"""Handoffs on traces of agent and tool spans only (no model call on the trace, as a framework's default telemetry
writes them): the agents of one request are joined by the transfer that names the next one, whatever its name."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import _invoke, _otlp


def _tool(tracer: Any, name: str, description: str) -> None:
    span = tracer.start_span(f"execute_tool {name}")
    span.set_attribute("gen_ai.operation.name", "execute_tool")
    span.set_attribute("gen_ai.tool.name", name)
    span.set_attribute("gen_ai.tool.description", description)
    span.end()


def _desk_then_accounts(handover: str = "Send the customer on to accounts.", fails: bool = False) -> Any:
    """A front desk runs a tool, then `accounts` acts: each agent's invocation under a message-delivery span of
    its own, beside the other's, under the application's span. Only the tool's description says whom it sends
    the customer to."""

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            with (
                tracer.start_as_current_span("deliver front_desk"),
                trace.use_span(_invoke(tracer, "front_desk"), end_on_exit=True),
            ):
                _tool(tracer, "zq_move", handover)
            with (
                tracer.start_as_current_span("deliver accounts"),
                trace.use_span(_invoke(tracer, "accounts"), end_on_exit=True) as span,
            ):
                _tool(tracer, "delete_account", "Delete a customer's account.")
                if fails:
                    span.set_status(Status(StatusCode.ERROR, "model backend unavailable"))

    return build


def test_a_transfer_that_names_the_next_agent_joins_both_agents_into_one_request() -> None:
    runs = rebuild(decode_traces(_otlp(_desk_then_accounts())).spans)
    requests = [r for r in runs if r.parent_span_id is None]
    assert len(requests) == 1  # one request, the delete in it: a safety grader sees it
    request = requests[0]
    assert [t.name for t in request.tool_calls] == ["delete_account"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "accounts", "agent_acted")
    ]
    assert "llm_calls" in request.lacks  # the model's turns are not on the trace


def test_a_request_whose_last_agent_failed_failed_when_no_model_call_is_on_the_trace() -> None:
    runs = rebuild(decode_traces(_otlp(_desk_then_accounts(fails=True))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.status == "error" and request.error == "model backend unavailable"


def test_agents_whose_tools_name_no_one_stay_requests_of_their_own() -> None:
    runs = rebuild(decode_traces(_otlp(_desk_then_accounts(handover="Look up a policy."))).spans)
    assert sorted(r.agent_name or "" for r in runs if r.parent_span_id is None) == ["accounts", "front_desk"]
