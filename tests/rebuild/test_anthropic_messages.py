"""Anthropic Messages API conversations read as OpenAI-style messages: text blocks, tool use and tool results."""

from __future__ import annotations

from otelgrade.rebuild.anthropic_messages import from_anthropic
from otelgrade.rebuild.messages import tool_results


def test_anthropic_blocks_become_openai_style_messages() -> None:
    messages = from_anthropic(
        [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "12C rain"}]},
        ],
        system="Be brief.",
    )
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert tool_results(messages) == {"t1": "12C rain"}
