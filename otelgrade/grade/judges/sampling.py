"""Which runs a sampled judge grades: a rate per environment, and a stable choice by trace id, the same on every
replica and replay."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass

from otelgrade.core.metrics import UNKNOWN
from otelgrade.core.results import GradeResult
from otelgrade.core.settings import SampleRates
from otelgrade.core.trajectory import Conversation, Trajectory
from otelgrade.grade.judges.client import JudgeClient
from otelgrade.grade.judges.request import Judgement


def sample_point(trace_id: str, grader_name: str) -> float:
    """A stable point in [0, 1) for this run and grader."""
    digest = hashlib.blake2b(f"{trace_id.lower()}\x00{grader_name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def sample_key(trajectory: Trajectory) -> str:
    """What a judge's sample is drawn by: the trace id of a run, the conversation (scope and id) of a whole one (so a
    conversation graded again after it resumes is sampled as it was before)."""
    if isinstance(trajectory, Conversation) and trajectory.conversation_id:
        return f"conversation:{trajectory.conversation_key}"
    return trajectory.trace_id


def is_sampled(trace_id: str, grader_name: str, rate: float) -> bool:
    """Whether the run is in the grader's sample; a run sampled at one rate is also sampled at every higher one."""
    return rate >= 1.0 or sample_point(trace_id, grader_name) < rate


def sample_rate(levels: Iterable[SampleRates | None], environment: str | None) -> float:
    """The rate for a run of `environment` (None: `unknown`), from the most specific level that names it or has a
    `default`; 1.0 when none does."""
    for level in levels:
        rate = level.rate(environment or UNKNOWN) if level is not None else None
        if rate is not None:
            return rate
    return 1.0


@dataclass(frozen=True)
class SuiteSample:
    """The judge client of one suite's graders: the suite's `sample` applies to their judges, under a judge's own."""

    client: JudgeClient
    sample: SampleRates

    def judge(
        self, grader: str, judgement: Judgement, trajectory: Trajectory, sample: SampleRates | None = None
    ) -> GradeResult | Future[GradeResult]:
        return self.client.judge(grader, judgement, trajectory, sample=sample if sample is not None else self.sample)
