"""Graders of one call (`scope: tool_call` / `llm_call`), each given a view of the run holding just that call."""

from __future__ import annotations

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import LLMCall, ToolCall
from otelgrade.grade.graders import build_grader
from otelgrade.grade.graders.calls import finish_kind
from tests.trajectories import run


def one_tool(**fields: object) -> object:
    return run(tool_calls=[ToolCall(name="get_weather", **fields)])  # type: ignore[arg-type]


def outcome(type_name: str, view: object, **params: object) -> str:
    return build_grader(type_name, params)(view).outcome  # type: ignore[arg-type, union-attr]


def test_arguments_are_checked_against_a_json_schema() -> None:
    schema = {"type": "object", "required": ["city"]}
    assert outcome("arguments_schema", one_tool(arguments={"city": "Paris"}), schema=schema) == "pass"
    assert outcome("arguments_schema", one_tool(arguments={"town": "Paris"}), schema=schema) == "fail"


def test_arguments_contain_and_match_read_them_as_json_text() -> None:
    call = one_tool(arguments={"city": "Paris"})
    assert outcome("arguments_contain", call, text='"city": "Paris"') == "pass"
    assert outcome("arguments_match", call, pattern=r"Par[iy]s") == "pass"


def test_a_call_neither_executed_nor_answered_is_skipped_not_passed() -> None:
    assert outcome("tool_succeeded", one_tool(error=True, result="timeout")) == "fail"
    assert outcome("tool_succeeded", one_tool(span_id="c" * 16)) == "pass"
    assert outcome("tool_succeeded", one_tool()) == "skipped"


def test_finish_reasons_are_read_in_the_conventions_spelling() -> None:
    assert [finish_kind(r) for r in ("tool_use", "MAX_TOKENS", "SAFETY", "end_turn")] == [
        "tool_call",
        "length",
        "content_filter",
        "stop",
    ]
    cut = run(llm_calls=[LLMCall(finish_reason="max_tokens")])
    assert outcome("finish_reason", cut) == "fail"
    assert outcome("finish_reason", run(llm_calls=[LLMCall()])) == "skipped"


def test_allow_and_disallow_together_are_refused() -> None:
    with pytest.raises(ConfigError, match="not both"):
        build_grader("finish_reason", {"allow": ["stop"], "disallow": ["length"]})
