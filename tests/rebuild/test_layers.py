"""One model call seen at two layers side by side (a provider SDK's own span and an instrumentation's span of the
same request, both children of the application's span) is one call; calls that only overlap in time are not."""

from __future__ import annotations

from typing import Any

from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import span


def _call(span_id: str, start: int, end: int, error: bool = False, **attrs: Any) -> Any:
    return span(
        span_id, "1", "chat", start, end, error, gen_ai__operation__name="chat", gen_ai__request__model="m", **attrs
    )


def _sdk(span_id: str, start: int, end: int, response: str, tokens: int) -> Any:
    """The SDK's span: the response and usage, no finish reason."""
    return _call(
        span_id,
        start,
        end,
        gen_ai__response__id=response,
        gen_ai__usage__input_tokens=tokens,
        gen_ai__usage__output_tokens=5,
    )


def _instrumented(span_id: str, start: int, end: int, response: str, tokens: int, finish: str) -> Any:
    """The instrumentation's span of the same request, around the SDK's in time, with the finish reason."""
    return _call(
        span_id,
        start,
        end,
        gen_ai__response__id=response,
        gen_ai__usage__input_tokens=tokens,
        gen_ai__usage__output_tokens=5,
        gen_ai__response__finish_reasons=[finish],
    )


def test_an_sdk_span_and_an_instrumentation_span_of_one_request_are_one_call() -> None:
    (run,) = rebuild_trace(
        [
            span("1", None, "handle_request", 0, 100),
            _sdk("2", 11, 19, "r1", 60),
            _instrumented("3", 10, 20, "r1", 60, "tool_calls"),
            _sdk("4", 31, 39, "r2", 70),
            _instrumented("5", 30, 40, "r2", 70, "tool_calls"),
            _call("6", 50, 60, True),
            _call("7", 51, 59, True),
        ]
    )
    assert [c.span_id for c in run.llm_calls] == ["2".rjust(16, "0"), "4".rjust(16, "0"), "7".rjust(16, "0")]
    assert [c.finish_reason for c in run.llm_calls][:2] == ["tool_calls", "tool_calls"]  # each call's both records
    assert run.status == "error"


def test_overlapping_calls_of_different_responses_stay_two_calls() -> None:
    (run,) = rebuild_trace(
        [
            span("1", None, "handle_request", 0, 100),
            _instrumented("2", 10, 30, "r1", 60, "tool_calls"),
            _sdk("3", 11, 19, "r2", 60),  # held in time, but another response: a call of its own
            _instrumented("4", 40, 50, "r3", 70, "stop"),
            _sdk("5", 41, 49, "r3", 70),
        ]
    )
    assert len(run.llm_calls) == 3
