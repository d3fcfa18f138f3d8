"""The judge client graders see: without a runner, every judge grade is `skipped`, never a verdict."""

from __future__ import annotations

from otelgrade.grade.graders.rubric import rubric
from otelgrade.grade.judges import DISABLED
from tests.trajectories import run


def test_with_no_judge_runner_a_judge_grade_is_skipped_never_failed() -> None:
    result = DISABLED.judge("helpful", rubric(prompt="Grade it."), run(output="hi"))
    assert result.outcome == "skipped"  # type: ignore[union-attr]
