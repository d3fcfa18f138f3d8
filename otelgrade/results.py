"""`Grade`: one grader's verdict on one run, as sinks write it and metrics count it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class Grade:
    trace_id: str
    span_id: str
    suite: str
    grader: str
    score: float | None
    passed: bool
    outcome: str  # pass | fail | error | skipped
    rationale: str
    grader_type: str = ""
    agent_name: str | None = None
    service_name: str | None = None
    time_unix: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
