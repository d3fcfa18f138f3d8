"""evaldeck conformance cases through otelgrade: a grader class with its constructor params (and the
test case's `expected:` as fallbacks), or a whole test-case YAML, against a neutral trajectory.

Test-only conversion lives here: evaldeck's steps (LLM calls padded with reasoning steps), its
statuses, and multi-turn runs given as one trajectory per turn.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import LLMCall, ToolCall, Trajectory
from otelgrade.grade.graders import build_grader, grader_specs, grader_type
from otelgrade.grade.graders.evaldeck import case_params
from tests.conformance.adapters import Observed


def _tool_calls(neutral: dict[str, Any], prefix: str = "") -> list[ToolCall]:
    out = []
    for i, call in enumerate(neutral.get("tool_calls") or []):
        result = call.get("result")
        out.append(
            ToolCall(
                name=call["name"],
                call_id=f"{prefix}call_{i}",
                arguments=call.get("arguments"),
                result=result if result is None or isinstance(result, str) else json.dumps(result),
                step=call.get("step", 0),
            )
        )
    return out


def to_trajectory(neutral: dict[str, Any]) -> Trajectory:
    return Trajectory(
        trace_id="0" * 32,
        span_id="0" * 16,
        source="conformance",
        output=neutral.get("output"),
        status="ok" if neutral.get("status", "ok") in ("ok", "success") else "error",
        tool_calls=_tool_calls(neutral),
        llm_calls=[LLMCall(step=i) for i in range(neutral.get("llm_calls") or 0)],
        steps=neutral.get("steps") or 0,
        messages=list(neutral.get("messages") or []),
    )


def multi_turn_trajectory(turns: list[dict[str, Any]], users: list[str]) -> Trajectory:
    """One run holding every turn: each turn's user message, tool calls, LLM calls and final answer."""
    messages: list[dict[str, Any]] = []
    tool_calls: list[ToolCall] = []
    llm_calls: list[LLMCall] = []
    for i, turn in enumerate(turns):
        history = [{"role": "user", "content": u} for u in users[: i + 1]]
        messages.append({"role": "user", "content": users[i] if i < len(users) else ""})
        calls = _tool_calls(turn, prefix=f"t{i}_")
        for call in calls:
            function = {"name": call.name, "arguments": json.dumps(call.arguments)}
            tc = [{"id": call.call_id, "type": "function", "function": function}]
            messages.append({"role": "assistant", "content": None, "tool_calls": tc})
            messages.append({"role": "tool", "tool_call_id": call.call_id, "content": call.result})
        tool_calls += calls
        llm_calls += [LLMCall(input_messages=history) for _ in range(turn.get("llm_calls") or 0)]
        if turn.get("output") is not None:
            messages.append({"role": "assistant", "content": turn["output"]})
    last = turns[-1] if turns else {}
    return Trajectory(
        trace_id="0" * 32,
        span_id="0" * 16,
        source="conformance",
        output=last.get("output"),
        status="ok" if last.get("status", "ok") in ("ok", "success") else "error",
        tool_calls=tool_calls,
        llm_calls=llm_calls,
        steps=len(llm_calls),
        messages=messages,
    )


def _block(case: dict[str, Any]) -> dict[str, Any]:
    config = case["config"]
    if "yaml" not in config:  # one grader class, graded against its test case's `expected:`
        params = config.get("params") or {}
        if config.get("expected"):
            params = case_params(grader_type(case["grader"]).name, params, config["expected"])
        return {"type": case["grader"], "params": params}
    doc = yaml.safe_load(config["yaml"]) or {}
    if isinstance(doc.get("turns"), list) and not config.get("multi_turn"):
        # evaldeck's Python `Evaluator.evaluate` grades the whole run against the first turn only
        first = doc["turns"][0] if doc["turns"] else {}
        return {"name": doc.get("name"), "expected": first.get("expected") or {}, "graders": first.get("graders") or []}
    doc.setdefault("expected", None if "turns" in doc else {})
    return doc


def run_case(case: dict[str, Any]) -> Observed:
    data = case["input"]
    try:
        block = _block(case)
        specs = grader_specs(block, "case", system="evaldeck")
        spec = next(s for s in specs if s.type.startswith("evaldeck."))
        grade = build_grader(spec.type, spec.params)
    except (ConfigError, ValueError, TypeError) as exc:
        return Observed(None, None, error="config_error", detail=str(exc))
    if case["config"].get("multi_turn") and data.get("turn_trajectories"):
        users = [t.get("user", "") for t in block.get("turns") or []]
        trajectory = multi_turn_trajectory(data["turn_trajectories"], users)
    else:
        trajectory = to_trajectory(data["trajectory"])
    result = grade(trajectory)
    if result.outcome == "error":  # evaldeck status `error`
        return Observed(None, None, error="config_error", detail=result.rationale)
    return Observed(result.score, result.passed, detail=result.rationale)
