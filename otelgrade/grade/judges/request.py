"""What a judge grader asks a model: the `Judgement` interface and the chat request it produces."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

from otelgrade.core.results import GradeResult
from otelgrade.core.settings import JudgeControls
from otelgrade.core.trajectory import Part, Trajectory

AnswerMode = Literal["json_schema", "json_object", "tool"]
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


def is_reasoning_model(model: str) -> bool:
    """o1/o3/o4/gpt-5 style models: fixed temperature, no system role on the oldest ones."""
    return bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1].lower()))


class Judgement(ABC):
    """One configured judge: the prompt for a run, and how to read the model's answer as a grade."""

    controls: JudgeControls

    @abstractmethod
    def request(self, trajectory: Trajectory) -> JudgeRequest | GradeResult:
        """The chat request for this run, or a grade now when there is nothing to ask (e.g. no output)."""

    @abstractmethod
    def read(self, content: str | None, tool_calls: list[tuple[str, str]]) -> GradeResult:
        """The model's answer (text, and tool calls as (name, arguments JSON)) as a grade; malformed is `error`."""

    def reads(self) -> frozenset[Part]:
        """The parts of a run the prompt shows the model (a run lacking one is not judged)."""
        return frozenset()


@dataclass(frozen=True)
class JudgeRequest:
    """The chat request a judge wants sent (model and sampling settings are added by the runner)."""

    system: str
    user: str
    mode: AnswerMode
    pass_fail: bool = False

    def api_params(self) -> dict[str, Any]:
        """`response_format` or the forced `submit_grade` tool, for `chat.completions.create`."""
        if self.mode == "tool":
            return {
                "tools": [SUBMIT_GRADE_TOOL],
                "tool_choice": {"type": "function", "function": {"name": "submit_grade"}},
            }
        if self.mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        schema = PASS_FAIL_SCHEMA if self.pass_fail else SCORE_SCHEMA
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "grade", "strict": True, "schema": schema},
            }
        }


SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string", "description": "Why this score, briefly."},
        "score": {"type": "number", "description": "From 0.0 (complete failure) to 1.0 (perfect)."},
    },
    "required": ["rationale", "score"],
    "additionalProperties": False,
}
PASS_FAIL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string", "description": "Why, briefly."},
        "passed": {"type": "boolean", "description": "True when the run meets the criteria."},
    },
    "required": ["rationale", "passed"],
    "additionalProperties": False,
}
SUBMIT_GRADE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_grade",
        "description": "Submit the grade for the response under evaluation.",
        "parameters": {
            "type": "object",
            "properties": {
                "score": {"type": "number", "description": "From 0.0 (complete failure) to 1.0 (perfect)."},
                "rationale": {"type": "string", "description": "Why this score, briefly."},
            },
            "required": ["score", "rationale"],
        },
    },
}
