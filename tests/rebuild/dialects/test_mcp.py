"""Model Context Protocol spans: `tools/call <tool>` is one execution of the tool, failed as the tool reports."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import ToolFacts
from tests.rebuild.genai_spans import agent, chat, span, tool


def read(**attrs: Any) -> ToolFacts:
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
    assert listed is not None and not isinstance(listed.facts, ToolFacts)


def test_an_mcp_call_seen_at_every_layer_is_one_understood_call() -> None:
    """The MCP Python SDK's client spans (`MCP send <method>`) name the tool only in the span name and carry the
    context attributes the client copied (`gen_ai.agent.name`): read as the protocol's work and as one more witness
    of the call, the run lacks nothing and holds the call once."""
    answer = [{"role": "assistant", "content": "Account k-2 is closed."}]
    asked = [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "close"}}]}]
    spans = [
        agent("1", None, "desk", 0, 20),
        span("2", "1", "MCP send tools/list", 1, 2, mcp__method__name="tools/list", gen_ai__agent__name="desk"),
        span("3", "2", "tools/list", 1, 2, mcp__method__name="tools/list"),
        chat("4", "1", 3, 4, [{"role": "user", "content": "Close k-2."}], gen_ai__output__messages=json.dumps(asked)),
        tool("5", "1", "close", 5, 9, "c1", "closed"),
        span("6", "5", "MCP send tools/call close", 5, 8, mcp__method__name="tools/call", gen_ai__agent__name="desk"),
        span("7", "6", "tools/call close", 6, 7, mcp__method__name="tools/call", gen_ai__tool__name="close"),
        chat(
            "8", "1", 10, 11, [{"role": "user", "content": "Close k-2."}], gen_ai__output__messages=json.dumps(answer)
        ),
    ]
    (run,) = rebuild(spans)
    assert (run.lacks, run.unread) == ([], [])
    assert [(c.name, c.result) for c in run.tool_calls] == [("close", "closed")]
