"""A grader's result: pass and fail are verdicts; error and skipped never count as failures."""

from __future__ import annotations

from otelgrade.core.results import OUTCOMES, GradeResult


def test_a_check_scores_one_or_zero() -> None:
    assert (GradeResult.check(True).score, GradeResult.check(False).score) == (1.0, 0.0)
    assert GradeResult.check(False, "3 calls > 2").outcome == "fail"


def test_a_score_passes_at_its_threshold() -> None:
    assert GradeResult.scored(0.7, 0.7).outcome == "pass"
    assert GradeResult.scored(0.69, 0.7).outcome == "fail"


def test_error_and_skipped_carry_no_score_and_no_verdict() -> None:
    for result in (GradeResult.error("judge timed out"), GradeResult.skipped("no output captured")):
        assert result.score is None
        assert result.outcome in ("error", "skipped")
        assert not result.passed


def test_a_new_threshold_judges_the_score_again_and_leaves_the_rest() -> None:
    assert GradeResult.scored(0.6, 0.5).at_threshold(0.8).outcome == "fail"
    assert GradeResult.scored(0.6, 0.8).at_threshold(0.5).outcome == "pass"
    error = GradeResult.error("judge timed out")
    assert error.at_threshold(0.1) is error
    assert GradeResult.check(True).at_threshold(None).outcome == "pass"


def test_the_outcomes_are_the_four_the_metrics_count() -> None:
    assert OUTCOMES == ("pass", "fail", "error", "skipped")
