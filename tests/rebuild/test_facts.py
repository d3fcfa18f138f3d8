"""The records dialects hand the rebuild: the calls a model's answer asked for."""

from __future__ import annotations

from otelgrade.rebuild.facts import requested_calls


def test_calls_asked_for_are_read_in_order_with_their_ids_and_arguments() -> None:
    answer = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "function": {"name": "search", "arguments": '{"q": "paris"}'}},
            {"id": "c2", "function": {"name": "get_weather", "arguments": "{}"}},
        ],
    }
    calls = requested_calls([{"role": "user", "content": "hi"}, answer])
    assert [(c.name, c.call_id) for c in calls] == [("search", "c1"), ("get_weather", "c2")]
    assert calls[0].arguments == {"q": "paris"}
