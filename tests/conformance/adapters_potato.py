"""Potato cases: the case's `{name, params}` block through the config loader; the submission becomes the
run's output (in Potato's text view), the reference its ground truth, converted as the case generator fed
Potato (a neutral trajectory becomes OpenAI messages; `*_native` inputs are used verbatim)."""

from __future__ import annotations

from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import build_grader, grader_specs
from otelgrade.grade.graders.potato import list_evaluators
from otelgrade.grade.graders.potato_reference import as_text, reference_calls
from tests.conformance.adapters import Observed

# Potato's LLM-based registry entries, which otelgrade serves with its own judge graders instead.
LLM_EVALUATORS = {
    "agent_as_judge",
    "answer_relevance",
    "context_relevance",
    "groundedness",
    "llm_trajectory_judge",
    "rubric_dag",
}


def openai_messages(neutral: dict[str, Any]) -> list[dict[str, Any]]:
    """A neutral trajectory as the OpenAI message list the case generator gave Potato."""
    messages = [{"role": m["role"], "content": m.get("content")} for m in neutral.get("messages") or []]
    for i, call in enumerate(neutral.get("tool_calls") or []):
        function = {"name": call["name"], "arguments": call.get("arguments")}
        messages.append(
            {"role": "assistant", "tool_calls": [{"id": f"call_{i}", "type": "function", "function": function}]}
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": call.get("result")})
    return messages


def _is_neutral(value: Any) -> bool:
    return isinstance(value, dict) and "tool_calls" in value and "messages" in value and "steps" in value


def trajectory_for(inp: dict[str, Any]) -> Trajectory:
    neutral = inp.get("trajectory") or {}
    if "trajectory_native" in inp:
        calls = [ToolCall(name=c.name, arguments=c.args) for c in reference_calls(inp["trajectory_native"])]
    else:
        calls = [
            ToolCall(name=c["name"], arguments=c.get("arguments"), step=c.get("step", 0))
            for c in neutral.get("tool_calls") or []
        ]
    if "ground_truth_native" in inp:
        reference = inp["ground_truth_native"]
    elif _is_neutral(inp.get("ground_truth")):
        reference = openai_messages(inp["ground_truth"])
    else:
        reference = inp.get("ground_truth")
    submission = inp.get("submission")
    return Trajectory(
        trace_id="0" * 32,
        span_id="0" * 16,
        output=None if submission is None else as_text(submission),
        tool_calls=calls,
        ground_truth=reference,
    )


def run_case(case: dict[str, Any]) -> Observed:
    expected = case["expected"]
    if case["grader"] == "registry" and "names" in expected:
        ours, theirs = set(list_evaluators()), set(expected["names"]) - LLM_EVALUATORS
        if ours != theirs:
            return Observed(None, None, error="registry_mismatch", detail=f"{sorted(ours ^ theirs)}")
        return Observed(None, None)
    try:
        [spec] = grader_specs(case["config"], system="potato")
        grade = build_grader(spec.type, spec.params)
    except ConfigError as exc:
        return Observed(None, None, error="config_error", detail=str(exc))
    result = grade(trajectory_for(case["input"]))
    if result.outcome == "error":
        kind = "config_error" if result.metadata.get("config_error") else "error"
        return Observed(None, None, error=kind, detail=result.rationale)
    if result.outcome == "skipped":
        return Observed(None, None, detail=result.rationale)
    score = result.score
    if spec.type == "potato.embedding_similarity":
        score = result.metadata["value"]  # Potato's unclamped cosine
    return Observed(score, result.passed, detail=result.rationale)
