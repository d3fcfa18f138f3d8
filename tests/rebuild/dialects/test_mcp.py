"""Model Context Protocol spans: `tools/call <tool>` is one execution of the tool, failed as the tool reports."""

from __future__ import annotations

from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import ToolFacts
from tests.rebuild.genai_spans import span


def read(**attrs: object) -> ToolFacts:
    classified = classify(span("1", None, "tools/call get_weather", 0, 1, **attrs))
    assert classified is not None and classified.dialect == "mcp"
    assert isinstance(classified.facts, ToolFacts)
    return classified.facts


def test_a_tools_call_span_is_an_execution_of_its_tool() -> None:
    facts = read(mcp__method__name="tools/call", gen_ai__tool__name="get_weather")
    assert (facts.name, facts.error) == ("get_weather", False)


def test_a_result_the_tool_reported_as_an_error_fails_the_call() -> None:
    assert read(mcp__method__name="tools/call", mcp__tool__result__is_error=True).error
    assert read(mcp__method__name="tools/call", error__type="tool_error").error


def test_the_protocols_own_methods_are_no_call_of_the_agent() -> None:
    listed = classify(span("1", None, "tools/list", 0, 1, mcp__method__name="tools/list"))
    assert listed is None or listed.dialect != "mcp"
