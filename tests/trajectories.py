"""Runs built by hand for tests of one grader or rule: a `Trajectory` with fixed ids and the fields given."""

from __future__ import annotations

from typing import Any

from otelgrade.core.trajectory import Conversation, LLMCall, ToolCall, Trajectory


def run(*tools: str, **fields: Any) -> Trajectory:
    """A run with fixed ids; each name in `tools` is one successful tool call, in order (or give `tool_calls`)."""
    fields.setdefault("tool_calls", [ToolCall(name=name, step=step) for step, name in enumerate(tools, 1)])
    return Trajectory(trace_id="a" * 32, span_id="b" * 16, **fields)


def conversation(*requests: str, **fields: Any) -> Conversation:
    """A conversation whose turns asked `requests`, in order, each answered by one model call."""
    turns = [
        Trajectory(trace_id=f"{i:032x}", span_id=f"{i:016x}", input=text, llm_calls=[LLMCall(step=1)])
        for i, text in enumerate(requests, 1)
    ]
    return Conversation(trace_id=turns[-1].trace_id, span_id=turns[-1].span_id, turns=len(turns), runs=turns, **fields)
