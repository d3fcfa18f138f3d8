"""Graders of whole conversations: turns taken, requests repeated, hand-over to a person."""

from __future__ import annotations

from otelgrade.grade.graders import build_grader
from tests.trajectories import conversation, run


def test_max_turns_counts_request_runs() -> None:
    assert build_grader("max_turns", {"max": 2})(conversation("a", "b", "c")).outcome == "fail"  # type: ignore[union-attr]
    assert build_grader("max_turns", {"max": 3})(conversation("a", "b", "c")).outcome == "pass"  # type: ignore[union-attr]


def test_a_request_asked_again_is_a_repeat() -> None:
    asked = conversation("Where is my order?", "where is my   ORDER?", "Thanks")
    result = build_grader("user_repeats", {})(asked)
    assert (result.outcome, result.metadata["repeats"]) == ("fail", 1)  # type: ignore[union-attr]


def test_a_conversation_grader_on_a_single_run_says_where_it_belongs() -> None:
    result = build_grader("max_turns", {"max": 2})(run())
    assert result.outcome == "error"  # type: ignore[union-attr]
    assert "level: conversation" in result.rationale  # type: ignore[union-attr]
