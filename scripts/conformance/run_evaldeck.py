"""Computes evaldeck cases by running the installed evaldeck: reads cases (config and input) as JSONL on
stdin, writes them on stdout with `expected`, `observed` and `source` filled in from what evaldeck returned.

Run with the Python of a venv that has evaldeck installed (see compute_cases.py)."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

from caseio import Outcome, answer_each
from evaldeck import graders as evaldeck_graders
from evaldeck.evaluator import Evaluator
from evaldeck.test_case import EvalCase, ExpectedBehavior, Turn
from evaldeck.trace import Step, StepStatus, StepType, Trace, TraceStatus

_STATUS = {"ok": "success", "error": "error"}


def trace_for(neutral: dict[str, Any]) -> Trace:
    """Tool calls as tool steps, then `llm_calls` model steps, then reasoning steps up to `steps`."""
    steps = [
        Step(
            type=StepType.TOOL_CALL,
            tool_name=c["name"],
            tool_args=c.get("arguments") or {},
            tool_result=c.get("result"),
            status=StepStatus.SUCCESS,
        )
        for c in neutral.get("tool_calls") or []
    ]
    steps += [
        Step(type=StepType.LLM_CALL, model="m", input="q", output="a") for _ in range(neutral.get("llm_calls") or 0)
    ]
    steps += [
        Step(type=StepType.REASONING, reasoning_text="r")
        for _ in range(max(0, (neutral.get("steps") or 0) - len(steps)))
    ]
    status = neutral.get("status") or "ok"
    return Trace(input="q", output=neutral.get("output"), status=TraceStatus(_STATUS.get(status, status)), steps=steps)


def _grade(grade: Any) -> dict[str, Any]:
    return {"grader": grade.grader_name, "status": grade.status.value, "score": grade.score, "message": grade.message}


def _outcome(status: str) -> dict[str, Any]:
    if status == "error":
        return {"score": None, "passed": None, "error": "config_error"}
    return {"score": None, "passed": status == "pass", "error": None}


def run_grader(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    config = case["config"]
    grader = getattr(evaldeck_graders, case["grader"])(**config.get("params", {}))
    expected = ExpectedBehavior(**(config.get("expected") or {}))
    test_case = EvalCase(name="c", turns=[Turn(user="q", expected=expected)])
    grade = grader.grade(trace_for(case["input"]["trajectory"]), test_case)
    observed = _grade(grade)
    return _outcome(observed["status"]), observed


def run_yaml(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    test_case = EvalCase.from_yaml_string(case["config"]["yaml"])
    evaluator = Evaluator()
    observed: dict[str, Any] = {}
    if case["config"].get("multi_turn"):  # `evaldeck run`'s path: each turn against its own expectations
        traces = iter([trace_for(t) for t in case["input"]["turn_trajectories"]])
        result = asyncio.run(evaluator._evaluate_single_async(test_case, lambda *_: next(traces), False))
        observed["turns"] = [
            {
                "turn": t.turn_index,
                "status": t.status.value,
                "skipped": t.skipped,
                "grades": [_grade(g) for g in t.grades],
            }
            for t in result.turn_results
        ]
        built = [g.grader_name for g in result.grades]
    else:
        built = [g.name for g in evaluator._build_graders(test_case)]
        result = evaluator.evaluate(trace_for(case["input"]["trajectory"]), test_case)
    observed.update(
        graders_built=built,
        grades=[_grade(g) for g in result.grades],
        status=result.status.value,
        pass_rate=result.pass_rate,
    )
    return _outcome(observed["status"]), observed


def run(case: dict[str, Any]) -> Outcome:
    try:
        return (run_yaml if case["grader"] == "yaml_expected" else run_grader)(case)
    except Exception as exc:  # evaldeck raising while building graders is a config error
        return {"score": None, "passed": None, "error": "config_error"}, {"exception": f"{type(exc).__name__}: {exc}"}


def main() -> None:
    answer_each(run, f"ran evaldeck=={version('evaldeck')}")


if __name__ == "__main__":
    main()
