"""How one trace was read: every span with the dialect that read it, the role the rebuild gave it, and why
(`otelgrade inspect`). A user whose framework is misread sees at once which span went wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from otelgrade.core.spans import AnySpan, LogEvent, Span
from otelgrade.core.trajectory import PARTS, Trajectory
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import ChainFacts, LLMFacts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.runs import Notes
from otelgrade.rebuild.trace import rebuild_trace
from otelgrade.rebuild.tree import Tree
from otelgrade.rebuild.unread import would_hold


@dataclass(frozen=True, slots=True)
class Reading:
    """What the rebuild made of one span."""

    span_id: str
    name: str
    depth: int
    dialect: str | None
    role: str  # run, nested run, LLM call, tool call, step, merged, ignored, missing
    why: str


def explain_trace(
    received: Sequence[AnySpan], logs: Sequence[LogEvent] = (), dialects: Sequence[Dialect] = ()
) -> tuple[list[Trajectory], list[Reading]]:
    """The trace's runs, and a reading of every span in tree order (depth = nesting)."""
    spans = [span.read() for span in received]
    notes: Notes = {}
    runs = rebuild_trace(spans, logs, notes, dialects)
    tree = Tree(spans, logs)
    roles: dict[str, tuple[str, str]] = {}
    for run in runs:
        label = f"{run.agent_name or 'run'} ({run.status})"
        roles[run.span_id] = ("nested run" if run.parent_span_id else "run", f"the root of agent run {label}")
        for call in run.llm_calls:
            if call.span_id and call.span_id != run.span_id:
                roles[call.span_id] = ("LLM call", f"step {call.step} of {run.agent_name or 'the run'}")
        for tool in run.tool_calls:
            if tool.span_id:
                roles.setdefault(tool.span_id, ("tool call", f"`{tool.name}` at step {tool.step}"))
    readings = [
        Reading(
            sid,
            tree.spans[sid].name,
            _depth(tree, sid),
            found.dialect if (found := classify(tree.spans[sid], dialects)) else None,
            *roles.get(sid) or _set_aside(found.facts if found else None, notes.get(sid), tree.spans[sid]),
        )
        for sid in sorted(tree.order, key=tree.order.__getitem__)
    ]
    known = set(tree.spans)
    readings += [Reading(sid, "", 0, None, "missing", why) for sid, why in notes.items() if sid not in known]
    return runs, readings


def _set_aside(facts: object, note: str | None, span: Span | None = None) -> tuple[str, str]:
    if note is not None:
        return ("merged" if note.startswith(("wraps", "the same call")) else "ignored"), note
    if isinstance(facts, ChainFacts):
        return "step", facts.why or "groups the run's work (a chain, workflow or step)"
    if isinstance(facts, TransferFacts):
        return "handoff", f"states a control transfer to {facts.to_agent or 'another agent'}"
    if isinstance(facts, RunFacts | LLMFacts | ToolFacts):
        return "ignored", "outside every run"
    if span is not None and (parts := would_hold(span)):
        held = ", ".join(p for p in PARTS if p in parts)
        return "not understood", f"carries an AI instrumentation's marks no dialect reads: its run lacks {held}"
    return "ignored", "not a span of any known agent convention (kept, not graded)"


def _depth(tree: Tree, span_id: str) -> int:
    return sum(1 for _ in tree.ancestors(span_id))
