"""letta-evals extractors: the text a grader judges, picked out of a run's conversation."""

from __future__ import annotations

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import ToolCall
from otelgrade.grade.graders.extractors import check_extractor, extract
from tests.trajectories import run

MESSAGES = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "get_weather"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "12C rain"},
    {"role": "assistant", "content": "It is 12C and raining."},
    {"role": "user", "content": "And tomorrow?"},
    {"role": "assistant", "content": "ANSWER: sunny"},
]
CHAT = run(
    messages=MESSAGES,
    tool_calls=[ToolCall(name="get_weather", call_id="c1", arguments={"city": "Paris"}, result="12C rain")],
)


def test_assistant_extractors_skip_messages_that_only_call_tools() -> None:
    assert extract(CHAT, "first_assistant") == "It is 12C and raining."
    assert extract(CHAT, "last_assistant") == "ANSWER: sunny"


def test_a_marker_gives_what_follows_it() -> None:
    assert extract(CHAT, "after_marker", {"marker": "ANSWER:"}).strip() == "sunny"  # type: ignore[union-attr]


def test_a_tools_output_is_read_from_its_call() -> None:
    assert extract(CHAT, "tool_output", {"tool_name": "get_weather"}) == "12C rain"


def test_an_extractor_config_is_checked_at_load() -> None:
    with pytest.raises(ConfigError):
        check_extractor("after_marker", {})
    with pytest.raises(ConfigError):
        check_extractor("no_such_extractor", {})
