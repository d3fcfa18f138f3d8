"""Tool results that report a failure in a provider's or protocol's shape."""

from __future__ import annotations

from otelgrade.rebuild.tool_errors import says_failed


def test_structured_failure_reports_say_failed() -> None:
    assert says_failed('{"isError": true, "content": [{"type": "text", "text": "no such city"}]}')
    assert says_failed({"is_error": True})
    assert says_failed({"error": "quota exceeded"})  # a Gemini functionResponse


def test_a_result_is_not_a_failure_for_mentioning_one() -> None:
    assert not says_failed("12C rain")
    assert not says_failed('{"isError": false, "content": []}')
    assert not says_failed("the error rate is 2%")
