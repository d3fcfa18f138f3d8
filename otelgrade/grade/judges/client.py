"""The interface between judge graders and whatever sends their requests to a model."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol

from otelgrade.core.results import GradeResult
from otelgrade.core.settings import SampleRates
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.judges.request import Judgement


class JudgeClient(Protocol):
    def judge(
        self, grader: str, judgement: Judgement, trajectory: Trajectory, sample: SampleRates | None = None
    ) -> GradeResult | Future[GradeResult]:
        """A `skipped` grade now (not sampled, no key, budget spent, queue full), or the future answer.

        Never blocks and never raises; callable from any thread. `grader` is the configured grader name,
        which sampling and per-grader limits are keyed by; `sample` is its suite's, if the suite sets one.
        """
        ...


class _Disabled:
    """The client when no judge runner is running: every judge grade is `skipped`."""

    def judge(
        self, grader: str, judgement: Judgement, trajectory: Trajectory, sample: SampleRates | None = None
    ) -> GradeResult:
        return GradeResult.skipped("judge graders are disabled (no judge runner)", reason="not_running")


DISABLED: JudgeClient = _Disabled()
