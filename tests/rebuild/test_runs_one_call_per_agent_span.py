"""Model calls recorded as one span per agent (ADK's default telemetry): an agent's span that is also its model
call holds the next agent's invocation, and keeps its first response's tool calls beside its last answer (real OTel
SDK spans)."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Tracer

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import _oi, _otlp
from tests.rebuild.test_witnesses import agent, asks, chat, execute, says, the_run, told, user


def _call(tracer: Any, answer: str) -> Any:
    return _oi(
        tracer,
        "call_llm",
        "LLM",
        llm__model_name="gpt-4o",
        llm__input_messages__0__message__role="user",
        llm__input_messages__0__message__content="Close account u-1.",
        llm__output_messages__0__message__role="assistant",
        llm__output_messages__0__message__content=answer,
    )


def _agent_inside_a_model_call(tracer: Any) -> None:
    """The assessor's model call hands over; the payout agent's invocation runs inside that call's span."""
    with (
        trace.use_span(_oi(tracer, "assessor", "AGENT"), end_on_exit=True),
        trace.use_span(_call(tracer, "Passing you to payouts."), end_on_exit=True),
        trace.use_span(_oi(tracer, "payout", "AGENT"), end_on_exit=True),
    ):
        _call(tracer, "Account u-1 is closed.").end()


def test_a_model_call_holding_another_agent_s_invocation_is_two_calls_not_one_at_two_layers() -> None:
    runs = rebuild(decode_traces(_otlp(_agent_inside_a_model_call)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert len(request.llm_calls) == 2  # the assessor's call is not a wrapper of the payout agent's


def _last_call_keeps_first_calls(app: Tracer, server: Tracer) -> None:
    with agent(app):
        with execute(app, "lookup_order", "c1", "shipped"):
            pass
        replayed = [user(), asks(("c1", "lookup_order")), told("c1", "shipped")]
        stale = {"role": "assistant", "parts": [*asks(("c1", "lookup_order"))["parts"], *says("Shipped.")["parts"]]}
        chat(app, replayed, [stale], "stop")


def test_an_answer_beside_tool_calls_its_own_input_already_answered_is_the_run_s_answer() -> None:
    assert the_run(_last_call_keeps_first_calls).output == "Shipped."
