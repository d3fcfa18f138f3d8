"""The grader protocol: building a grader from its block, and grading that never turns a missing part or a
grader's own bug into a verdict."""

from __future__ import annotations

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import Unread
from otelgrade.grade.graders import build_grader, grade_safely
from tests.trajectories import run


def test_an_unknown_grader_type_offers_the_closest_names() -> None:
    with pytest.raises(ConfigError, match="max_tool_calls"):
        build_grader("max_tool_call", {"max": 2})


def test_a_hidden_parameter_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown key '_judges'"):
        build_grader("max_tool_calls", {"max": 2, "_judges": None})


def test_a_grader_that_reads_a_lacking_part_is_skipped_with_the_reason() -> None:
    verdict = grade_safely(build_grader("output_contains", {"values": ["booked"]}), run(lacks=["output"]))
    assert verdict.outcome == "skipped"  # type: ignore[union-attr]
    assert verdict.rationale == "content not captured: the trace carries no output"  # type: ignore[union-attr]


def test_spans_no_dialect_understood_are_named_as_the_reason() -> None:
    unread = [Unread(scope="acme.agents", spans=3, names=["acme.step"])]
    verdict = grade_safely(build_grader("max_tool_calls", {"max": 1}), run(lacks=["tool_calls"], unread=unread))
    assert verdict.metadata["reason"] == "not_understood"  # type: ignore[union-attr]
    assert "acme.agents" in verdict.rationale  # type: ignore[union-attr]


def test_a_grader_that_raises_gives_an_error_grade_not_a_crash() -> None:
    def broken(trajectory: object) -> object:
        raise ZeroDivisionError("division by zero")

    verdict = grade_safely(broken, run())  # type: ignore[arg-type]
    assert verdict.outcome == "error"  # type: ignore[union-attr]
    assert verdict.metadata["exception"] == "ZeroDivisionError"  # type: ignore[union-attr]
