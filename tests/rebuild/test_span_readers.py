"""The small readers every dialect shares: finish reasons as written, failures that are failures, durations."""

from __future__ import annotations

from otelgrade.core.spans import Event
from otelgrade.rebuild.span_readers import duration_s, failed, finish_reason, first, name_after, text
from tests.rebuild.genai_spans import span


def test_a_finish_reason_reads_from_each_spelling() -> None:
    assert finish_reason(["tool_calls"]) == "tool_calls"
    assert finish_reason('["stop"]') == "stop"
    assert finish_reason("FinishReason.STOP") == "stop"
    assert finish_reason([]) is None


def test_a_control_flow_exception_is_not_a_failure() -> None:
    handed = span("1", None, "node", 0, 1, error=True)
    handed.events.append(Event("exception", 0, {"exception.type": "langgraph.errors.ParentCommand"}))
    assert not failed(handed)
    broken = span("2", None, "node", 0, 1, error=True)
    broken.events.append(Event("exception", 0, {"exception.type": "ValueError"}))
    assert failed(broken)


def test_names_texts_and_durations() -> None:
    assert name_after(span("1", None, "execute_tool get_weather", 0, 1), "execute_tool") == "get_weather"
    assert first({"a": "", "b": "x"}, "a", "b") == "x"
    assert text("[REDACTED]") is None and text(3) == "3"
    assert duration_s(span("1", None, "x", 2, 5)) == 3.0
