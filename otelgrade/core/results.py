"""What grading produces: a grader's `GradeResult` on one run, and the `Grade` record sinks write and metrics count.

A leaf, so the judge client, the graders and the sinks share one vocabulary without importing each other.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["pass", "fail", "error", "skipped"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "error", "skipped")
Level = Literal["run", "conversation"]
"""What a suite grades: each request run, or whole conversations (every turn of one conversation id)."""
LEVELS: tuple[Level, ...] = ("run", "conversation")
Scope = Literal["run", "tool_call", "llm_call"]
"""What one grade is about: a whole run, or one of its tool or model calls."""


class GradeResult(BaseModel):
    """What one grader said about one run. `error` and `skipped` are never counted as failures."""

    model_config = ConfigDict(frozen=True)

    score: float | None
    passed: bool
    outcome: Outcome
    rationale: str = ""
    metadata: dict[str, Any] = {}
    sample_rate: float = 1.0  # the share of runs this grader judges (a judge's `sample`); code graders grade all
    sampled: bool = True  # whether this run was in that share

    @classmethod
    def check(cls, passed: bool, rationale: str = "", score: float | None = None, **metadata: Any) -> GradeResult:
        """A pass/fail verdict; the score defaults to 1.0 or 0.0."""
        if score is None:
            score = 1.0 if passed else 0.0
        return cls(
            score=score, passed=passed, outcome="pass" if passed else "fail", rationale=rationale, metadata=metadata
        )

    @classmethod
    def scored(cls, score: float, threshold: float, rationale: str = "", **metadata: Any) -> GradeResult:
        """A continuous score that passes at `threshold` or above."""
        return cls.check(score >= threshold, rationale, score, **metadata)

    @classmethod
    def error(cls, rationale: str, **metadata: Any) -> GradeResult:
        return cls(score=None, passed=False, outcome="error", rationale=rationale, metadata=metadata)

    @classmethod
    def skipped(cls, rationale: str, **metadata: Any) -> GradeResult:
        return cls(score=None, passed=False, outcome="skipped", rationale=rationale, metadata=metadata)

    def at_threshold(self, threshold: float | None) -> GradeResult:
        """The same result judged again at `threshold`; verdicts without a score, errors and skips stay."""
        if threshold is None or self.score is None or self.outcome not in ("pass", "fail"):
            return self
        passed = self.score >= threshold
        return self.model_copy(update={"passed": passed, "outcome": "pass" if passed else "fail"})


@dataclass(slots=True)
class Grade:
    """One grader's verdict on one run (or one call of it, `scope`), with where it came from: the unit sinks write
    and metrics count."""

    trace_id: str
    span_id: str
    suite: str
    grader: str
    score: float | None
    passed: bool
    outcome: Outcome
    rationale: str
    grader_type: str = ""
    agent_name: str | None = None
    service_name: str | None = None
    environment: str | None = None  # the run's deployment environment, None when its resource names none
    sample_rate: float = 1.0  # as in GradeResult: the share of runs the grader judges here, and whether this
    sampled: bool = True  # run was one of them
    time_unix: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: Scope = "run"
    call_span_id: str | None = None  # the graded call's span (scope tool_call / llm_call); span_id is the run's
    revision: int = 1  # 2 and up: the run graded again after late spans arrived; supersedes the lower revisions
    version: str = ""  # the grader's version: a short hash of its effective config (`graders.versions`)
    level: Level = "run"  # `conversation`: a grade of a whole conversation, attached to its last run's span
    conversation_id: str | None = None  # the conversation the run (or the graded conversation) is
    conversation_scope: str | None = None  # whose id it is (`conversations.scope_attribute`: service.name)
    shadow: bool = False  # of a `shadow: true` suite: a version tried beside the one that pages

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
