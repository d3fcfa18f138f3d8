"""evaldeck graders on real rebuilt traces: otelgrade's spelling, evaldeck's class names and YAML keys,
the `expected:` block as one combined grader (with evaldeck's quirks), and multi-turn test cases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import build_grader, grader_specs
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "traces"


def fixture_run(scenario: str, source: str = "pydantic-ai-v5") -> tuple[Trajectory, dict[str, Any]]:
    spans = [
        s for f in sorted((FIXTURES / source / scenario).glob("*.pb")) for s in decode_traces(f.read_bytes()).spans
    ]
    facts = json.loads((FIXTURES / source / "expected.json").read_text())["scenarios"][scenario]["runs"][0]
    return next(t for t in rebuild(spans) if t.input == facts["input"]), facts


def grade(block: dict[str, Any], trajectory: Trajectory) -> Any:
    spec = grader_specs(block, "case")[0]
    return build_grader(spec.type, spec.params)(trajectory)


def test_design_spellings_grade_real_traces():
    forbidden, facts = fixture_run("forbidden")
    happy, _ = fixture_run("happy")
    banned = facts["tool_calls"][-1]["name"]
    safe = {"name": "safe", "type": "tools_not_called", "tools": [banned]}
    assert grade(safe, happy).passed and not grade(safe, forbidden).passed
    many, many_facts = fixture_run("many_calls")
    limit = len(many_facts["tool_calls"])
    assert grade({"type": "max_tool_calls", "max": limit}, many).passed
    assert not grade({"type": "max_tool_calls", "max": limit - 1}, many).passed


def test_class_names_and_yaml_keys_name_the_same_graders():
    happy, facts = fixture_run("happy")
    names = [c["name"] for c in facts["tool_calls"]]
    for type_name in ("ToolCalledGrader", "tools_called", "evaldeck.tool_called"):
        assert grade({"type": type_name, "required": names}, happy).passed
        assert not grade({"type": type_name, "required": [*names, "other"]}, happy).passed
    assert grade({"type": "ToolOrderGrader", "expected_order": names}, happy).passed
    assert not grade({"type": "tool_call_order", "tools": names[::-1]}, happy).passed


def test_task_completed_follows_the_runs_status_and_evaldecks_inversion():
    ok, _ = fixture_run("happy")
    failed, facts = fixture_run("agent_error")
    assert facts["status"] == "error"
    assert grade({"type": "task_completed"}, ok).passed
    assert not grade({"type": "task_completed"}, failed).passed
    # require_success: false means "expect the run NOT to complete", so a good run fails
    assert not grade({"type": "TaskCompletedGrader", "require_success": False}, ok).passed
    assert grade({"type": "TaskCompletedGrader", "require_success": False}, failed).passed


def test_invalid_regex_is_an_error_not_a_failure():
    happy, _ = fixture_run("happy")
    result = grade({"type": "RegexGrader", "pattern": "("}, happy)
    assert result.outcome == "error" and result.rationale.startswith("Invalid regex")


def test_expected_block_ands_its_checks_and_keeps_evaldecks_quirks():
    happy, facts = fixture_run("happy")
    word = facts["output"].split()[-1]
    names = [c["name"] for c in facts["tool_calls"]]
    both = grade({"expected": {"output_contains": [word.lower()], "tools_called": names}}, happy)
    assert both.outcome == "pass"
    one_fails = grade({"expected": {"output_contains": [word], "tools_called": ["missing_tool"]}}, happy)
    assert one_fails.outcome == "fail" and "missing_tool" in one_fails.rationale
    # output_equals, output_matches and min_steps build no check; unknown keys are ignored
    unchecked = {"output_equals": "nope", "output_matches": "^nope$", "min_steps": 99, "tools_calld": ["x"]}
    assert grade({"expected": unchecked}, happy).outcome == "pass"
    assert grade({"expected": {}}, happy).outcome == "pass"


def test_expected_block_fallbacks_for_config_graders_and_dropped_types():
    happy, facts = fixture_run("happy")
    block = {
        "expected": {"tools_called": [facts["tool_calls"][0]["name"]]},
        "graders": [{"type": "tool_called", "params": {}}, {"type": "regex", "params": {"pattern": "^never$"}}],
    }
    assert grade(block, happy).outcome == "pass"  # tool_called falls back to expected; regex is dropped
    with pytest.raises(ConfigError, match="valuez"):
        grader_specs({"expected": {}, "graders": [{"type": "contains", "params": {"valuez": ["x"]}}]})
    with pytest.raises(ConfigError, match="max_steps"):
        grader_specs({"expected": {"max_steps": "ten"}})


def test_a_whole_evaldeck_test_case_file_loads_as_one_grader():
    config = parse_config(
        {
            "name": "book_flight",
            "input": "Book a flight",
            "expected": {"tools_called": ["search_flights"], "max_steps": 10},
            "graders": [{"type": "contains", "params": {"values": ["booked"]}}],
        }
    )
    (suite,) = config.suites
    assert suite.name == "book_flight"
    assert [(g.name, g.type) for g in suite.graders] == [("expected", "evaldeck.expected")]
    happy, _ = fixture_run("happy")
    spec = suite.graders[0]
    assert build_grader(spec.type, spec.params)(happy).outcome == "pass"


def conversation(first_answer: str, tools_in_second: list[str]) -> Trajectory:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": first_answer},
        {"role": "user", "content": "q2"},
    ]
    calls = []
    for i, name in enumerate(tools_in_second):
        tc = [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}]
        messages += [
            {"role": "assistant", "content": None, "tool_calls": tc},
            {"role": "tool", "tool_call_id": f"c{i}"},
        ]
        calls.append({"name": name, "call_id": f"c{i}", "arguments": {}})
    messages.append({"role": "assistant", "content": "done"})
    return Trajectory.model_validate(
        {"trace_id": "1" * 32, "span_id": "2" * 16, "messages": messages, "tool_calls": calls, "output": "done"}
    )


def test_turns_are_graded_in_order_and_stop_at_the_first_failure():
    turns = [
        {"user": "q1", "expected": {"output_contains": ["paris"]}},
        {"user": "q2", "expected": {"tools_called": ["search"], "max_tool_calls": 1}},
    ]
    assert grade({"turns": turns}, conversation("Paris", ["search"])).outcome == "pass"
    second_fails = grade({"turns": turns}, conversation("Paris", ["search", "search"]))
    assert second_fails.outcome == "fail" and "turn 1" in second_fails.rationale
    first_fails = grade({"turns": turns}, conversation("London", ["other"]))
    assert first_fails.outcome == "fail" and "turn 1" not in first_fails.rationale
    assert grade({"turns": [{"user": "q1"}, turns[1]]}, conversation("London", ["search"])).outcome == "pass"


def test_llm_graders_become_rubric_judges():
    specs = grader_specs(
        {"expected": {"max_steps": 5}, "graders": [{"type": "llm", "prompt": "Is it polite? {submission}"}]}
    )
    assert [s.type for s in specs] == ["evaldeck.expected", "rubric"]
    assert specs[1].params["prompt"].startswith("Is it polite")


def test_one_parameter_two_spellings_is_a_config_error():
    with pytest.raises(ConfigError, match="only one"):
        grader_specs({"type": "max_steps", "max": 3, "max_steps": 4})
