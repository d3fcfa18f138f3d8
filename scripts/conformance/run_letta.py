"""Computes letta-evals cases by running the installed letta-evals: reads cases (config and input) as JSONL on
stdin, writes them on stdout with `expected`, `observed` and `source` filled in from what letta-evals returned.

Each case's config is a `kind: tool` grader; it is graded the way the runner grades a sample (`grade_sample`,
so list inputs with list ground truths take the per-turn path). Run with the Python of a venv that has
letta-evals installed (see compute_cases.py)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any

from caseio import answer_each
from letta_client.types import AgentState, ToolReturnMessage
from letta_client.types.agents import AssistantMessage, Block, ToolCall, ToolCallMessage, UserMessage
from letta_evals.execution.grading import grade_sample
from letta_evals.graders.tool import ToolGrader
from letta_evals.models import Sample

_WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def turns_for(neutral: dict[str, Any]) -> list[list[Any]]:
    """letta's turn lists: per turn, its user messages, then its tool calls (each followed by its return when
    the result is not null), then its assistant messages. A dict of arguments is `json.dumps`'d."""
    items = neutral.get("messages") or []
    calls = neutral.get("tool_calls") or []
    count = neutral.get("turns") or 1 + max([m.get("turn", 0) for m in items] + [c.get("turn", 0) for c in calls] + [0])
    turns: list[list[Any]] = [[] for _ in range(count)]
    for i, m in enumerate(items):
        if m["role"] == "user":
            turns[m.get("turn", 0)].append(UserMessage(id=f"user-{i}", date=_WHEN, content=m["content"]))
    for i, c in enumerate(calls):
        arguments = c.get("arguments")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})
        call = ToolCall(name=c["name"], arguments=text, tool_call_id=f"call_{i}")
        turn = turns[c.get("turn", 0)]
        turn.append(ToolCallMessage(id=f"call-{i}", date=_WHEN, tool_call=call))
        if c.get("result") is not None:
            result = c["result"] if isinstance(c["result"], str) else json.dumps(c["result"])
            turn.append(
                ToolReturnMessage(
                    id=f"ret-{i}", date=_WHEN, status="success", tool_call_id=f"call_{i}", tool_return=result
                )
            )
    for i, m in enumerate(items):
        if m["role"] == "assistant":
            turns[m.get("turn", 0)].append(AssistantMessage(id=f"asst-{i}", date=_WHEN, content=m["content"]))
    return turns


def agent_state_for(neutral: dict[str, Any]) -> AgentState | None:
    blocks = neutral.get("memory_blocks")
    if blocks is None:
        return None
    return AgentState.model_construct(
        blocks=[Block.model_construct(label=b["label"], value=b["value"]) for b in blocks]
    )


def _failed(exc: Exception, phase: str) -> tuple[dict[str, Any], dict[str, Any]]:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return {"score": None, "passed": None, "error": "config_error"}, {
        "exception": f"{type(exc).__name__}: {text}" if text else type(exc).__name__,
        "phase": phase,
    }


def run(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    config = case["config"]
    given = case["input"]
    try:
        grader = ToolGrader(
            function=config["function"],
            extractor=config.get("extractor", "last_assistant"),
            extractor_config=config.get("extractor_config"),
        )
    except Exception as exc:
        return _failed(exc, "ToolGrader construction")
    try:
        sample = Sample(id=0, input=given.get("sample_input", "q"), ground_truth=given.get("ground_truth"))
    except Exception as exc:
        return _failed(exc, "Sample validation")
    trajectory = given["trajectory"]
    try:
        grades, submissions, _ = asyncio.run(
            grade_sample(
                sample, turns_for(trajectory), agent_state_for(trajectory), {"g": grader}, 0, "agent", "m", None
            )
        )
    except Exception as exc:  # raised by an extractor: a sample-level error in the runner
        return _failed(exc, "grade (raised during extraction/grading)")
    grade, submission = grades["g"], submissions["g"]
    observed: dict[str, Any] = {"rationale": grade.rationale, "submission": submission}
    if grade.per_turn_grades:
        observed["per_turn"] = [
            {"turn": g.turn, "score": g.score, "submission": g.submission, "rationale": g.rationale}
            for g in grade.per_turn_grades
        ]
        observed["metadata"] = {k: v for k, v in grade.metadata.items() if k != "extraction_time"}
    return {"score": grade.score, "passed": None, "error": None, "extracted": submission}, observed


def main() -> None:
    answer_each(run, f"ran letta-evals=={version('letta-evals')} (letta-client=={version('letta-client')})")


if __name__ == "__main__":
    main()
