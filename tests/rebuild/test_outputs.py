"""A recorded answer that is a placeholder, or the text of the failure the run ended on, is no answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.outputs import placeholder, recorded_answer
from tests.rebuild.test_handoffs import _execute, _invoke, _otlp
from tests.rebuild.test_rebuild import _chat, parts_calls, parts_user


@pytest.mark.parametrize("written", ["None", "null", "undefined", "", "  "])
def test_a_null_written_out_is_no_answer(written: str) -> None:
    assert placeholder(written)
    assert recorded_answer(written) is None


def test_a_real_answer_is_kept() -> None:
    assert not placeholder("None of the flights fit; try tomorrow.")
    assert recorded_answer("Booked.") == "Booked."


def _worker(answer: str) -> Any:
    """An agent whose second model call fails (the backend's 500), after which the framework still ends its
    invocation unset, recording `answer` as the agent's output."""

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            desk = _invoke(tracer, "payout_desk")
            desk.set_attribute("gen_ai.output.messages", json.dumps([_said(answer)]))
            with trace.use_span(desk, end_on_exit=True):
                _chat(tracer, [parts_user("Where is my payout?")], [parts_calls(("c1", "payout_status", {}))])
                with trace.use_span(_execute(tracer, "payout_status", "c1", "pending"), end_on_exit=True):
                    pass
                with tracer.start_as_current_span("chat gpt-4o", record_exception=False) as failing:
                    failing.set_attribute("gen_ai.operation.name", "chat")
                    failure = "Error code: 500 - model backend unavailable"
                    failing.record_exception(RuntimeError(failure))
                    failing.set_status(trace.Status(trace.StatusCode.ERROR, f"InternalServerError: {failure}"))

    return build


def _said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def test_the_failure_text_reported_as_the_answer_is_no_answer() -> None:
    """The agent's recorded answer is the text of the failure its last model call ended on: the run failed."""
    (run,) = rebuild(decode_traces(_otlp(_worker("model backend unavailable"))).spans)
    assert (run.status, run.output) == ("error", None)
    assert run.error == "InternalServerError: Error code: 500 - model backend unavailable"


def test_an_answer_of_its_own_after_a_failed_call_is_kept() -> None:
    """A recorded answer the failure does not hold (the framework's own fallback text) is still the run's answer."""
    (run,) = rebuild(decode_traces(_otlp(_worker("Your payout is pending."))).spans)
    assert (run.status, run.output) == ("ok", "Your payout is pending.")
