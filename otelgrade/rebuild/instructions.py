"""Agents no span names, told apart by their instructions: a run whose model calls carry no agent (a workflow
that switches the agent its model speaks as, with no span per agent) hands over where its model is given other
instructions right after a tool call that names the next agent and whose result says so.

The evidence is threefold, each part of it behaviour, none a name the rule knows: the system instructions of the
model call after the tool call differ from those before; an argument of the call is a single word (`bookings`);
and the call's result names that word (`Agent bookings is now handling the request`). A tool that only changes
the instructions (a memory edit) names no agent in its result, and stays a tool call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from otelgrade.core.trajectory import Handoff, LLMCall, ToolCall
from otelgrade.rebuild.transfers import told

_WORD = re.compile(r"[A-Za-z][\w.-]{0,63}")


def handoffs_by_instructions(
    llm_calls: Sequence[LLMCall], calls: Sequence[ToolCall], decided_by: str, first: str | None = None
) -> tuple[dict[int, Handoff], dict[int, str]]:
    """The calls (by index) that hand over to an agent of other instructions, as handoffs, and the agent each
    model call speaks as (by step; `first`, where known, before the first handoff). Empty where the model calls
    already say whose they are."""
    if any(c.agent for c in llm_calls):
        return {}, {}
    by_step = {c.step: c for c in llm_calls}
    out: dict[int, Handoff] = {}
    agent_at: dict[int, str] = {}
    speaking = first
    for i, call in enumerate(calls):
        before, after = by_step.get(call.step), by_step.get(call.step + 1)
        if before is None or after is None or call.error:
            continue
        said_before, said_after = _instructions(before), _instructions(after)
        if said_before is None or said_after is None or said_before == said_after:
            continue
        target = next((v for v in _words(call.arguments) if told(call.result, v)), None)
        if target is None:
            continue
        out[i] = Handoff(from_agent=speaking, to_agent=target, step=call.step, decided_by=decided_by)
        speaking = target
        for step in by_step:
            if step > call.step:
                agent_at[step] = target
    if out and first:
        agent_at.update({step: first for step in by_step if step not in agent_at})
    return out, agent_at


def turns_after(llm_calls: Sequence[LLMCall], handoffs: Sequence[Handoff]) -> dict[int, str]:
    """The agent each model call after a transfer speaks as (by step), where the transfer is already known (a span
    states it) and the model is given other instructions right after it: that agent's turn, until the next such
    transfer. Empty where the model calls already say whose they are, or no instructions change."""
    if any(c.agent for c in llm_calls):
        return {}
    by_step = {c.step: c for c in llm_calls}
    agent_at: dict[int, str] = {}
    for handoff in sorted(handoffs, key=lambda h: h.step):
        before, after = by_step.get(handoff.step), by_step.get(handoff.step + 1)
        if handoff.to_agent is None or before is None or after is None:
            continue
        said_before, said_after = _instructions(before), _instructions(after)
        if said_before is not None and said_after is not None and said_before != said_after:
            agent_at.update({step: handoff.to_agent for step in by_step if step > handoff.step})
    return agent_at


def _instructions(call: LLMCall) -> str | None:
    texts = [m.get("content") for m in call.input_messages if m.get("role") in ("system", "developer")]
    return "\n".join(t for t in texts if isinstance(t, str)) or None


def _words(arguments: object) -> list[str]:
    if not isinstance(arguments, dict):
        return []
    return [v for v in arguments.values() if isinstance(v, str) and _WORD.fullmatch(v)]
