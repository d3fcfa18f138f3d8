"""vally cases: the `{type, config}` block through the config loader, the neutral trajectory as a
`Trajectory` (each tool call keeps its 0-based agent step; non-string results are JSON-stringified as
vally does before matching)."""

from __future__ import annotations

from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import build_grader, grader_specs
from otelgrade.grade.graders.jsregex import js_stringify
from tests.conformance.adapters import Observed


def trajectory_for(neutral: dict[str, Any]) -> Trajectory:
    calls = [
        ToolCall(
            name=c["name"],
            arguments=c.get("arguments"),
            result=c.get("result")
            if c.get("result") is None or isinstance(c["result"], str)
            else js_stringify(c["result"]),
            step=c.get("step", 0),
        )
        for c in neutral.get("tool_calls") or []
    ]
    return Trajectory(
        trace_id="0" * 32,
        span_id="0" * 16,
        output=neutral.get("output"),
        status=neutral.get("status") or "ok",
        tool_calls=calls,
        messages=neutral.get("messages") or [],
        steps=neutral.get("steps") or 0,
    )


def run_case(case: dict[str, Any]) -> Observed:
    try:
        [spec] = grader_specs(case["config"], system="vally")
        grade = build_grader(spec.type, spec.params)
    except ConfigError as exc:
        return Observed(None, None, error="config_error", detail=str(exc))
    result = grade(trajectory_for(case["input"]["trajectory"]))
    if result.outcome == "error":
        return Observed(None, None, error="error", detail=result.rationale)
    return Observed(result.score, result.passed, detail=result.rationale)
