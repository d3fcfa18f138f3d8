"""Conversations read the same whatever format recorded them: JSON values and OpenAI-style messages."""

from __future__ import annotations

from otelgrade.rebuild.messages import from_openai, last_user_text, parse_json_maybe, result_text, tool_results


def test_arguments_are_an_object_when_the_text_is_json_for_one() -> None:
    assert parse_json_maybe('{"city": "Paris"}') == {"city": "Paris"}
    assert parse_json_maybe("city=Paris") == "city=Paris"


def test_a_json_encoded_string_result_is_unwrapped_once() -> None:
    assert result_text('"12C rain"') == "12C rain"
    assert result_text({"temp": 12}) == '{"temp": 12}'


def test_openai_messages_keep_tool_calls_and_their_results() -> None:
    messages = from_openai(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "12C rain"},
        ]
    )
    assert last_user_text(messages) == "Weather in Paris?"
    assert tool_results(messages) == {"c1": "12C rain"}


def test_geminis_model_role_is_the_assistant() -> None:
    from otelgrade.rebuild.messages import assistant_text, message

    said = message("model", "Policy P-310 is active.")
    assert said["role"] == "assistant" and assistant_text([said]) == "Policy P-310 is active."
