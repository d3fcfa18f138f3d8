"""A tool call is known by two witnesses, the model's request and its execution: matched by call id, each shown."""

from __future__ import annotations

import json

from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import agent, chat, tool

ASK = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris and Rome?"}]}]


def asking(*calls: tuple[str, str]) -> str:
    parts = [{"type": "tool_call", "id": cid, "name": name, "arguments": {"city": "Paris"}} for cid, name in calls]
    return json.dumps([{"role": "assistant", "parts": parts}])


def test_a_request_and_its_execution_are_one_call_with_both_witnesses() -> None:
    (run,) = rebuild_trace(
        [
            agent("1", None, "weather_agent", 0, 10),
            chat("2", "1", 1, 2, ASK, gen_ai__output__messages=asking(("call_1", "get_weather"))),
            tool("3", "1", "get_weather", 3, 4, "call_1", "12C rain"),
            chat("4", "1", 5, 6, ASK),
        ]
    )
    (call,) = run.tool_calls
    assert (call.name, call.arguments, call.result) == ("get_weather", {"city": "Paris"}, "12C rain")
    assert call.witnesses[:2] == ["request", "execution"]


def test_a_call_asked_for_and_never_executed_is_kept_and_says_so() -> None:
    (run,) = rebuild_trace(
        [
            agent("1", None, "weather_agent", 0, 10),
            chat(
                "2",
                "1",
                1,
                2,
                ASK,
                gen_ai__output__messages=asking(("call_1", "get_weather"), ("call_2", "get_weather")),
            ),
            tool("3", "1", "get_weather", 3, 4, "call_1", "12C rain"),
            chat("4", "1", 5, 6, ASK),
        ]
    )
    assert [c.call_id for c in run.tool_calls] == ["call_1", "call_2"]
    assert "execution" not in run.tool_calls[1].witnesses
