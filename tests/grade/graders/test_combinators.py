"""Graders made of graders: all_of, any_of, not, threshold."""

from __future__ import annotations

from otelgrade.grade.graders import build_grader
from tests.trajectories import run

SAFE = {"type": "tools_not_called", "tools": ["delete_account"]}
SHORT = {"type": "max_tool_calls", "max": 1}


def outcome(type_name: str, trajectory: object, **params: object) -> str:
    return build_grader(type_name, params)(trajectory).outcome  # type: ignore[arg-type, union-attr]


def test_all_of_passes_only_when_every_child_passes() -> None:
    assert outcome("all_of", run("lookup"), graders=[SAFE, SHORT]) == "pass"
    assert outcome("all_of", run("lookup", "lookup"), graders=[SAFE, SHORT]) == "fail"


def test_any_of_passes_when_one_child_passes() -> None:
    assert outcome("any_of", run("lookup", "lookup"), graders=[SAFE, SHORT]) == "pass"
    assert outcome("any_of", run("delete_account", "x"), graders=[SAFE, SHORT]) == "fail"


def test_not_turns_a_verdict_around_and_leaves_a_skip() -> None:
    assert outcome("not", run("delete_account"), grader=SAFE) == "pass"
    assert outcome("not", run(lacks=["tool_calls"]), grader=SAFE) != "fail"


def test_an_error_of_a_child_is_the_error_of_all_of() -> None:
    broken = {"type": "output_matches", "pattern": "("}
    assert outcome("all_of", run("lookup", output="x"), graders=[SAFE, broken]) == "error"
