"""Match the tool calls a run's model responses requested with the tool spans that executed them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from otelgrade.rebuild.facts import RequestedCall, Step, ToolFacts
from otelgrade.rebuild.messages import parse_json_maybe
from otelgrade.rebuild.tree import Tree
from otelgrade.spans import Span
from otelgrade.trajectory import ToolCall


def tool_calls(tree: Tree, executions: list[tuple[Span, ToolFacts]], steps: list[Step]) -> list[ToolCall]:
    """A run's tool calls, ordered by the response that requested them, then their order in it.

    Each requested call takes its execution span: by call id, else by name and equal arguments,
    else by name alone, in order. Executions no response asked for (content not captured) are
    placed by their parent LLM span, else by time, after that step's requested calls.
    """
    executions = sorted(executions, key=lambda sf: (sf[0].start_ns, tree.order[sf[0].span_id]))
    requested = [(step, i, call) for step in steps for i, call in enumerate(step.calls)]
    matched: dict[int, int] = {}  # requested index -> execution index
    used: set[int] = set()

    def match(rule: Callable[[RequestedCall, ToolFacts], bool]) -> None:
        for r, (_, _, call) in enumerate(requested):
            if r in matched:
                continue
            for e, (_, facts) in enumerate(executions):
                if e not in used and rule(call, facts):
                    matched[r] = e
                    used.add(e)
                    break

    by_id: dict[str, list[int]] = {}
    for e, (_, facts) in enumerate(executions):
        if facts.call_id:
            by_id.setdefault(facts.call_id, []).append(e)
    for r, (_, _, call) in enumerate(requested):  # by call id first, without a quadratic scan
        candidates = [e for e in by_id.get(call.call_id or "", ()) if e not in used]
        if candidates:
            matched[r] = candidates[0]
            used.add(candidates[0])
    match(lambda c, f: not (c.call_id and f.call_id) and c.name == f.name and _same_args(c.arguments, f.arguments))
    match(lambda c, f: not (c.call_id and f.call_id) and c.name == f.name)

    results = _conversation_results(steps)
    ordered: list[tuple[tuple[int, int, int, int], ToolCall]] = []
    for r, (step, i, call) in enumerate(requested):
        execution = executions[matched[r]] if r in matched else None
        if execution is None:
            tc = ToolCall(
                name=call.name,
                call_id=call.call_id,
                arguments=call.arguments,
                step=step.index,
                result=results.get(call.call_id) if call.call_id else None,
            )
        else:
            span, facts = execution
            tc = ToolCall(
                name=call.name,
                call_id=call.call_id or facts.call_id,
                arguments=call.arguments if call.arguments is not None else facts.arguments,
                result=facts.result if facts.result is not None or facts.error else results.get(call.call_id or ""),
                error=facts.error,
                step=step.index,
                span_id=span.span_id,
            )
        ordered.append(((step.index, 0, i, 0), tc))
    step_of_span = {s.span.span_id: s.index for s in steps}
    for e, (span, facts) in enumerate(executions):
        if e in used:
            continue
        step_index = next((step_of_span[a] for a in tree.ancestors(span.span_id) if a in step_of_span), None)
        if step_index is None:
            step_index = sum(1 for s in steps if s.span.start_ns <= span.start_ns)
        tc = ToolCall(
            name=facts.name,
            call_id=facts.call_id,
            arguments=facts.arguments,
            result=facts.result,
            error=facts.error,
            step=step_index,
            span_id=span.span_id,
        )
        ordered.append(((step_index, 1, span.start_ns, tree.order[span.span_id]), tc))
    ordered.sort(key=lambda kv: kv[0])
    return [tc for _, tc in ordered]


def _same_args(a: Any, b: Any) -> bool:
    return bool(_canonical(a) == _canonical(b))


def _canonical(value: Any) -> Any:
    value = parse_json_maybe(value)
    if isinstance(value, str):
        return value.strip()
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _conversation_results(steps: list[Step]) -> dict[str, str]:
    """Tool results by call id, as later model requests show them."""
    out: dict[str, str] = {}
    for step in steps:
        for m in step.facts.input_messages:
            if m.get("role") == "tool" and m.get("tool_call_id") and isinstance(m.get("content"), str):
                out.setdefault(m["tool_call_id"], m["content"])
    return out
