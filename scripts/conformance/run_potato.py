"""Computes Potato cases by running the installed `potato.evaluators`: reads cases (config and input) as JSONL
on stdin, writes them on stdout with `expected`, `observed` and `source` filled in from what Potato returned.

Run with the Python of a venv that has potato-annotation and jsonschema installed (see compute_cases.py)."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from caseio import answer_each
from potato.evaluators.registry import build_evaluator

TRAJECTORY_EVALUATORS = ("trajectory_match", "tool_use", "tool_call_accuracy")


def openai_messages(neutral: Any) -> Any:
    """A neutral trajectory as OpenAI chat messages: its messages, then one assistant message per tool call
    followed by the tool's result message. Arguments pass through unchanged (dict or string). Anything else
    (None, a bare string) is handed to Potato as it is."""
    if not isinstance(neutral, dict):
        return neutral
    out: list[dict[str, Any]] = [{"role": m["role"], "content": m["content"]} for m in neutral.get("messages") or []]
    for i, call in enumerate(neutral.get("tool_calls") or []):
        function = {"name": call["name"], "arguments": call.get("arguments")}
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": function}],
            }
        )
        if call.get("result") is not None:
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": f"call_{i}",
                    "content": json.dumps(call["result"]) if not isinstance(call["result"], str) else call["result"],
                }
            )
    return out


def arguments(case: dict[str, Any]) -> dict[str, Any]:
    given = case["input"]
    if case["config"]["name"] in TRAJECTORY_EVALUATORS:
        outputs: Any = given.get("trajectory_native", openai_messages(given["trajectory"]))
        reference: Any = given.get("ground_truth_native", openai_messages(given.get("ground_truth")))
    else:
        outputs, reference = given.get("submission"), given.get("ground_truth")
    return {"outputs": outputs, "reference_outputs": reference}


def params(case: dict[str, Any]) -> dict[str, Any]:
    """The case's params; an `embed_table` (text -> vector) stands for an injected `embed_fn`."""
    given = dict(case["config"].get("params") or {})
    if "embed_table" in given:
        table = given.pop("embed_table")
        given["embed_fn"] = lambda text: table[text]
    return given


def run(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    phase = "build_evaluator"
    try:
        evaluator = build_evaluator(case["config"]["name"], params(case))
        phase = "evaluate"
        result = evaluator.evaluate(**arguments(case))
    except Exception as exc:  # Potato raising is a config error (the experiment runner records it as an error)
        return {"score": None, "passed": None, "error": "config_error"}, {
            "exception": f"{type(exc).__name__}: {exc}",
            "phase": phase,
        }
    observed = {"key": result.key, "value": result.value, "comment": result.comment, "metadata": result.metadata}
    passed = result.value if isinstance(result.value, bool) else None
    return {"score": result.score, "passed": passed, "error": None}, observed


def main() -> None:
    answer_each(run, f"ran potato-annotation=={version('potato-annotation')} (jsonschema=={version('jsonschema')})")


if __name__ == "__main__":
    main()
