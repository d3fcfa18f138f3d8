"""letta-evals conformance cases through otelgrade: the case's `kind: tool` block goes through the
config loader; the neutral trajectory becomes a `Trajectory` whose messages carry letta's turns.

Test-only conversion lives here: letta's dataset validation (a `Sample` rejects a non-string ground
truth, and per-turn lists of different lengths), and turning letta's turn lists into messages.
"""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import build_grader, grader_specs
from tests.conformance.adapters import Observed


def _sample_ok(ground_truth: Any, sample_input: Any) -> bool:
    """letta's `Sample` model: ground truth is a str or list of str; lists go turn by turn with the input."""
    if isinstance(ground_truth, list):
        if not all(isinstance(g, str) for g in ground_truth):
            return False
        return isinstance(sample_input, list) and len(sample_input) == len(ground_truth)
    return ground_truth is None or isinstance(ground_truth, str)


def to_trajectory(neutral: dict[str, Any], ground_truth: Any = None, sample_input: Any = None) -> Trajectory:
    """Messages ordered per turn as letta orders them: user, tool calls and returns, assistant."""
    msgs = neutral.get("messages") or []
    calls = neutral.get("tool_calls") or []
    turn_count = max(
        [int(m.get("turn", 0)) + 1 for m in msgs]
        + [int(c.get("turn", 0)) + 1 for c in calls]
        + [neutral.get("turns") or 0]
    )
    messages: list[dict[str, Any]] = []
    tool_calls: list[ToolCall] = []
    for turn in range(turn_count):
        start = len(messages)
        messages += [{**m, "turn": turn} for m in msgs if m.get("turn", 0) == turn and m.get("role") != "assistant"]
        for i, call in enumerate(calls):
            if call.get("turn", 0) != turn:
                continue
            call_id = f"call_{i}"
            args = call.get("arguments")
            raw = args if isinstance(args, str) else json.dumps(args)
            function = {"name": call["name"], "arguments": raw}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                    "turn": turn,
                }
            )
            result = call.get("result")
            if result is not None:
                result = result if isinstance(result, str) else json.dumps(result)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": result, "turn": turn})
            tool_calls.append(
                ToolCall(name=call["name"], call_id=call_id, arguments=args, result=result, step=call.get("step", 0))
            )
        messages += [{**m, "turn": turn} for m in msgs if m.get("turn", 0) == turn and m.get("role") == "assistant"]
        if len(messages) == start:  # an empty turn still exists in letta's turn list
            messages.append({"role": "system", "content": "", "turn": turn})
    attributes: dict[str, Any] = {}
    if "memory_blocks" in neutral:
        attributes["letta.memory"] = {b["label"]: b["value"] for b in neutral["memory_blocks"]}
    return Trajectory(
        trace_id="0" * 32,
        span_id="0" * 16,
        source="conformance",
        input=sample_input if isinstance(sample_input, str) else None,
        output=neutral.get("output"),
        messages=messages,
        tool_calls=tool_calls,
        attributes=attributes,
        ground_truth=ground_truth,
    )


def run_case(case: dict[str, Any]) -> Observed:
    data = case["input"]
    if not _sample_ok(data.get("ground_truth"), data.get("sample_input")):
        return Observed(None, None, error="config_error", detail="letta Sample validation")
    try:
        spec = grader_specs(case["config"], "metric", system="letta-evals")[0]
        grade = build_grader(spec.type, spec.params)
    except (ConfigError, ValueError) as exc:
        return Observed(None, None, error="config_error", detail=str(exc))
    result = grade(to_trajectory(data["trajectory"], data.get("ground_truth"), data.get("sample_input")))
    if result.outcome == "error":  # letta raises here; the case records that as an error
        return Observed(None, None, error="config_error", detail=result.rationale)
    return Observed(result.score, None, extracted=result.metadata.get("submission"), detail=result.rationale)
