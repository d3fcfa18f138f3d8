"""The chat request a judge sends: the answer format it forces, and which models are reasoning models."""

from __future__ import annotations

from otelgrade.grade.judges.request import JudgeRequest, is_reasoning_model


def test_the_answer_format_follows_the_mode() -> None:
    assert JudgeRequest("s", "u", "tool").api_params()["tool_choice"]["function"]["name"] == "submit_grade"
    assert JudgeRequest("s", "u", "json_object").api_params() == {"response_format": {"type": "json_object"}}
    strict = JudgeRequest("s", "u", "json_schema", pass_fail=True).api_params()["response_format"]["json_schema"]
    assert strict["strict"] and strict["schema"]["required"] == ["rationale", "passed"]


def test_reasoning_models_are_known_by_name_whatever_their_provider_prefix() -> None:
    assert is_reasoning_model("o3-mini") and is_reasoning_model("openai/gpt-5")
    assert not is_reasoning_model("gpt-4o-mini")
