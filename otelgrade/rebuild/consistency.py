"""Consistency as the safety net: after a trace is rebuilt, compare what each run's witnesses say, and where they
disagree with no rule to reconcile them, the run lacks what is uncertain (graders that need it answer `skipped`)
and says why (`Trajectory.disagreements`, counted in `otelgrade_runs_inconsistent_total{reason}`).

- `requested_vs_executed`: the run shows the model's requests and tool executions, and some call is seen by one
  of them only (asked for and neither executed nor answered, or executed unasked): how many calls were made, and
  which, is uncertain.
- `finish_reason_without_calls`: a model response ended for tool calls (`tool_calls`, `tool_use`,
  `function_call`), and no call, handoff or requested call of that step is seen.
- `continued_without_calls`: with no content captured, the next model call of the same agent continues the
  conversation (its input holds the previous call's input and output: tokens) after a response whose finish
  reason is unknown, with no call seen: something answered the model in between.
- `placeholder_output` (found while the run is built, `outputs.py`): the answer recorded is a placeholder and no
  model output stands in for it: the run lacks its output.
- `handoff_target_idle`: a handoff names an agent that never acts in the request: the transfer may be a plain
  tool call, so the request's tool calls are uncertain.
- `asked_by_unseen_call`: a tool the run executed was asked for by a model turn that a later model call's input
  holds (the call id), but no model call on the trace answered with: the model call that asked for it is not on
  the trace (an instrumentation that records one model call per agent), so the run lacks its model calls and
  conversation.
- `ended_on_unanswered_call`: with no content captured, a run that succeeded ends, after several model calls, on
  the one call its last response asked for, which no model call came after: a framework's own call that ends the
  loop (an answer tool, a transfer) looks the same as a tool, and without its arguments nothing tells them apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from otelgrade.core.trajectory import PARTS, REDACTED, Disagreement, LLMCall, Part, ToolCall, Trajectory
from otelgrade.rebuild.messages import function_of
from otelgrade.rebuild.span_readers import announces_tools

REASONS = (
    "requested_vs_executed",
    "finish_reason_without_calls",
    "continued_without_calls",
    "placeholder_output",
    "handoff_target_idle",
    "ended_on_unanswered_call",
    "asked_by_unseen_call",
)
_WORDS = re.compile(r"[a-z0-9]+")


def check_trace(runs: Sequence[Trajectory]) -> None:
    """Every run of one trace checked, disagreements recorded on it, and what they make uncertain lacking."""
    below: dict[str, list[Trajectory]] = {}
    for run in runs:
        if run.parent_span_id is not None:
            below.setdefault(run.parent_span_id, []).append(run)
    for run in runs:
        _redacted_is_absent(run)
        _results_unseen(run)
        found = _tool_witnesses(run) + _unseen_askers(run)
        if run.handoffs:
            found += _idle_targets(run, _acting(run, below))
        run.disagreements.extend(found)
        if run.disagreements:  # with those found while the run was built (`outputs.unanswered`)
            lacking = set(run.lacks).union(*(d.lacks for d in run.disagreements))
            run.lacks = [p for p in PARTS if p in lacking]


def _redacted_is_absent(run: Trajectory) -> None:
    """A request or answer an instrumentation replaced by its redaction placeholder is not on the trace: lacking,
    never text a grader matches (`__REDACTED__` asked of an agent called as a tool, or of a nested run)."""
    gone: set[Part] = set()
    if run.input in REDACTED:
        run.input = None
        gone.add("input")
    if run.output in REDACTED:
        run.output = None
        gone.add("output")
    if gone:
        run.lacks = [p for p in PARTS if p in gone or p in run.lacks]


def _results_unseen(run: Trajectory) -> None:
    """Calls that did not fail and whose results no witness shows, once the request's transfers are handoffs: the
    results are not on the trace (a trace of model calls only, whose last call failed before recording the
    conversation that held them), whatever a transfer's own answer said before it was read as one."""
    acting = [c for c in run.tool_calls if not c.error]
    if acting and "tool_results" not in run.lacks and all(c.result is None for c in acting):
        run.lacks = [p for p in PARTS if p == "tool_results" or p in run.lacks]


def _tool_witnesses(run: Trajectory) -> list[Disagreement]:
    if "tool_calls" in run.lacks:
        return []
    out = []
    calls = run.tool_calls
    by_agent: dict[str | None, list[ToolCall]] = {}
    for c in calls:  # each agent's model is its calls' witness: a code agent's calls are asked in its code
        by_agent.setdefault(c.agent, []).append(c)
    mixed = [
        c
        for own in by_agent.values()
        if any("request" in c.witnesses for c in own) and any("execution" in c.witnesses for c in own)
        for c in own
    ]
    if len(calls) > 1 and mixed:
        lone_asks = [c.name for c in mixed if c.witnesses == ["request"] and not c.error]
        lone_runs = [c.name for c in mixed if c.witnesses == ["execution"]]
        if lone_asks or lone_runs:
            said = []
            if lone_asks:
                said.append(f"asked for and never executed or answered: {', '.join(lone_asks)}")
            if lone_runs:
                said.append(f"executed and never asked for: {', '.join(lone_runs)}")
            out.append(_tool_calls_uncertain("requested_vs_executed", "; ".join(said)))
    seen = {c.step for c in calls} | {h.step for h in run.handoffs}
    announced = [
        call.step
        for call in run.llm_calls
        if call.finish_reason
        and announces_tools(call.finish_reason)
        and call.step not in seen
        and not _asks_for_tools(call)
    ]
    if announced:
        steps = ", ".join(str(s) for s in announced)
        detail = f"model call(s) at step {steps} ended for tool calls, and no call of theirs is on the trace"
        out.append(_tool_calls_uncertain("finish_reason_without_calls", detail))
    last = calls[-1] if calls else None
    if (
        last is not None
        and run.status == "ok"
        and "tool_results" in run.lacks
        and not last.error
        and len(run.llm_calls) > 1
        and last.step == run.llm_calls[-1].step
        and sum(c.step == last.step for c in calls) == 1
    ):
        detail = f"the run ends on `{last.name}`, whose result no model call saw: it may be the framework's own"
        out.append(_tool_calls_uncertain("ended_on_unanswered_call", detail))
    continued = [
        a.step
        for a, b in zip(run.llm_calls, run.llm_calls[1:], strict=False)
        if a.step not in seen and _continues(a, b) and a.step not in announced
    ]
    if continued:
        steps = ", ".join(str(s) for s in continued)
        detail = f"the model was called again after step {steps}, continuing its conversation, with no call seen"
        out.append(_tool_calls_uncertain("continued_without_calls", detail))
    return out


def _unseen_askers(run: Trajectory) -> list[Disagreement]:
    if "llm_calls" in run.lacks or not run.tool_calls or not any(c.output_messages for c in run.llm_calls):
        return []
    answered, replayed = set(), set()
    for call in run.llm_calls:
        asked = _asked_in(call.input_messages)
        replayed |= asked
        answered |= _asked_in(call.output_messages) - asked  # a response that asks again for a call its own input
        # already holds, answered, is an earlier response recorded on a later call's span
    unseen = [
        c.name
        for c in run.tool_calls
        if c.call_id
        and "execution" in c.witnesses
        and (c.call_id, c.name) in replayed
        and (c.call_id, c.name) not in answered
    ]
    if not unseen:
        return []
    detail = f"{', '.join(unseen)} executed, asked for by a model response no model call on the trace shows"
    return [Disagreement(reason="asked_by_unseen_call", detail=detail, lacks=["llm_calls", "messages"])]


def _asked_in(messages: Sequence[dict[str, Any]]) -> set[tuple[object, object]]:
    """The calls assistant messages ask for, as (id, name): ids alone repeat across turns in some providers."""
    return {
        (t.get("id"), function_of(t).get("name"))
        for m in messages
        if m.get("role") == "assistant"
        for t in m.get("tool_calls") or ()
        if isinstance(t, dict)
    }


def _asks_for_tools(call: LLMCall) -> bool:
    return any(m.get("tool_calls") for m in call.output_messages)


def _continues(a: LLMCall, b: LLMCall) -> bool:
    """`b` continues `a`'s conversation and `a` shows nothing of why: no content, no finish reason, and `b`'s input
    holds at least `a`'s input and output (tokens), as when a tool result was added in between."""
    if a.output_messages or a.input_messages or a.finish_reason or a.error or a.agent != b.agent:
        return False
    if a.input_tokens is None or a.output_tokens is None or b.input_tokens is None:
        return False
    return b.input_tokens >= a.input_tokens + a.output_tokens > 0


def _tool_calls_uncertain(reason: str, detail: str) -> Disagreement:
    return Disagreement(reason=reason, detail=detail, lacks=["tool_calls"])


def _spelling(name: str) -> str:
    return "_".join(_WORDS.findall(name.lower()))


def _acting(run: Trajectory, below: dict[str, list[Trajectory]]) -> set[str]:
    """The agents that act in a request: its own, those its calls name, and every nested run's."""
    acting = {_spelling(a) for a in (run.agent_name, *run.agents, *(c.agent for c in run.llm_calls)) if a}
    stack, seen = [run.span_id], set()
    while stack:
        for nested in below.get(stack.pop(), ()):
            if nested.span_id not in seen:
                seen.add(nested.span_id)
                acting.update(_spelling(a) for a in (nested.agent_name, *nested.agents) if a)
                stack.append(nested.span_id)
    return acting


def _idle_targets(run: Trajectory, acting: set[str]) -> list[Disagreement]:
    idle = [h.to_agent for h in run.handoffs if h.to_agent and _spelling(h.to_agent) not in acting]
    if not idle:
        return []
    detail = f"handed off to {', '.join(idle)}, which never acts in the request: the transfer may be a tool call"
    return [_tool_calls_uncertain("handoff_target_idle", detail)]
