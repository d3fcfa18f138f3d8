"""otelgrade's own checks under their unprefixed names, on runs built by hand."""

from __future__ import annotations

from otelgrade.grade.graders import build_grader, grade_safely
from tests.trajectories import run


def grade(type_name: str, trajectory: object, **params: object) -> str:
    return build_grader(type_name, params)(trajectory).outcome  # type: ignore[arg-type, union-attr]


def test_tools_not_called_fails_a_run_that_called_a_forbidden_tool() -> None:
    assert grade("tools_not_called", run("lookup", "delete_account"), tools=["delete_account"]) == "fail"
    assert grade("tools_not_called", run("lookup"), tools=["delete_account"]) == "pass"


def test_max_tool_calls_counts_every_call() -> None:
    assert grade("max_tool_calls", run("a", "b", "c"), max=2) == "fail"
    assert grade("max_tool_calls", run("a", "b"), max=2) == "pass"


def test_tool_call_order_allows_calls_between() -> None:
    assert grade("tool_call_order", run("search", "weather", "book"), tools=["search", "book"]) == "pass"
    assert grade("tool_call_order", run("book", "search"), tools=["search", "book"]) == "fail"


def test_output_checks_read_the_final_answer() -> None:
    answered = run(output="Booked UA123, confirmation ABC123456")
    assert grade("output_contains", answered, values=["abc123456"]) == "pass"
    assert grade("output_not_contains", answered, values=["sorry"]) == "pass"
    assert grade("output_matches", answered, pattern=r"[A-Z]{3}\d{6}") == "pass"


def test_a_run_whose_trace_lacks_its_tool_calls_is_skipped_not_passed() -> None:
    lacking = run(lacks=["tool_calls"])
    verdict = grade_safely(build_grader("tools_not_called", {"tools": ["delete_account"]}), lacking)
    assert verdict.outcome == "skipped"  # type: ignore[union-attr]
