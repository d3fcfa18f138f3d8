"""Assemble agent runs from classified spans: pick run roots, then build one `Trajectory` each.

A run root is an agent span (any dialect) that does work of its own (an LLM call or tool
execution outside any nested agent span) or that contains no other agent span; an agent span
that only wraps other agent spans (OpenAI Agents' `Agent workflow`, a Traceloop workflow around
an agent) is not a run. With no agent span at all, the trace root is the one run.

A nested run (sub-agent, agent-as-tool) is its own trajectory with `parent_span_id` set to the
enclosing run; the parent keeps only its own LLM and tool calls (the call that started the
nested run shows as the parent's tool call). A handoff between sibling agents (the new agent
records whom it took over from) sets `parent_span_id` the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialects import DIALECTS, Classified, classify
from otelgrade.rebuild.facts import LLMFacts, RunFacts, Step, ToolFacts, requested_calls
from otelgrade.rebuild.span_readers import is_error, text
from otelgrade.rebuild.tool_calls import tool_calls
from otelgrade.rebuild.tree import Tree
from otelgrade.spans import STATUS_OK, LogEvent, Span
from otelgrade.trajectory import LLMCall, Trajectory

# Run-span attributes that hold whole conversations or schemas: kept out of `attributes`.
_BLOBS = frozenset().union(*(d.blobs for d in DIALECTS))
_BLOB_PREFIXES = tuple(p for d in DIALECTS for p in d.blob_prefixes)
_AGENT_NAME_KEYS = tuple(dict.fromkeys(k for d in DIALECTS for k in d.agent_name_keys))
GROUND_TRUTH = "otelgrade.ground_truth"


def rebuild_trace(spans: Sequence[Span], logs: Sequence[LogEvent] = ()) -> list[Trajectory]:
    """Every agent run of one trace, ordered by start time."""
    if not spans:
        return []
    tree = Tree(spans, logs)
    classified = {sid: c for sid, span in tree.spans.items() if (c := classify(span)) is not None}
    agents = {sid for sid, c in classified.items() if isinstance(c.facts, RunFacts)}
    roots = _run_roots(tree, classified, agents)
    if not roots:
        root = tree.roots[0]
        regions = {root: [s for r in tree.roots for s in tree.walk(r)]}
    else:
        stop = frozenset(roots)
        regions = {r: tree.walk(r, stop) for r in roots}
    names = {r: _run_facts(classified, r).agent_name for r in regions}
    out = []
    for root, region in regions.items():
        parent = next((a for a in tree.ancestors(root) if a in regions), None)
        if parent is None:
            handed = _run_facts(classified, root).handed_off_from
            start = tree.spans[root].start_ns
            parent = next(
                (r for r in regions if r != root and handed and names[r] == handed and tree.spans[r].start_ns <= start),
                None,
            )
        out.append(_trajectory(tree, classified, root, region, parent))
    out.sort(key=lambda t: (tree.spans[t.span_id].start_ns, tree.order[t.span_id]))
    return out


def _run_roots(tree: Tree, classified: dict[str, Classified], agents: set[str]) -> list[str]:
    roots = []
    stop = frozenset(agents)
    for sid in sorted(agents, key=tree.order.__getitem__):
        region = tree.walk(sid, stop)
        works = any(isinstance(getattr(classified.get(s), "facts", None), (LLMFacts, ToolFacts)) for s in region)
        wraps = any(c in agents for s in region for c in tree.children.get(s, ()))
        if works or not wraps:
            roots.append(sid)
    return roots


def _run_facts(classified: dict[str, Classified], root: str) -> RunFacts:
    found = classified.get(root)
    return found.facts if found is not None and isinstance(found.facts, RunFacts) else RunFacts()


def _trajectory(
    tree: Tree, classified: dict[str, Classified], root: str, region: list[str], parent: str | None
) -> Trajectory:
    span = tree.spans[root]
    run = _run_facts(classified, root)
    steps = _steps(tree, classified, region)
    executions = [
        (tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, ToolFacts)
    ]
    tools = tool_calls(tree, executions, steps)
    messages = _messages(run, steps)

    first_input = steps[0].facts.input_messages if steps else []
    request = run.input or msg.last_user_text(first_input) or msg.last_user_text(messages) or run.fallback_input
    output = run.output
    if output is None and steps and not steps[-1].calls:
        output = msg.assistant_text(steps[-1].facts.output_messages)
    output = output.strip() or None if output else None

    status, error = _status(span)
    dialect = classified[root].dialect if root in classified else _majority_dialect(classified, region)
    agent_name = run.agent_name or _agent_name_in(tree, region) or span.name or None
    return Trajectory(
        trace_id=span.trace_id,
        span_id=span.span_id,
        service_name=text(span.resource.get("service.name")),
        agent_name=agent_name,
        source=dialect,
        input=request,
        output=output,
        status=status,
        error=error,
        start_time=_rfc3339(span.start_ns),
        end_time=_rfc3339(span.end_ns),
        duration_s=max(0, span.end_ns - span.start_ns) / 1e9 if span.end_ns and span.start_ns else None,
        llm_calls=[
            LLMCall(
                model=s.facts.model,
                provider=s.facts.provider,
                input_tokens=s.facts.input_tokens,
                output_tokens=s.facts.output_tokens,
                input_messages=s.facts.input_messages,
                output_messages=s.facts.output_messages,
                finish_reason=s.facts.finish_reason,
                step=s.index,
                span_id=s.span.span_id,
            )
            for s in steps
        ],
        tool_calls=tools,
        messages=messages,
        steps=len(steps),
        attributes=_attributes(span),
        ground_truth=_ground_truth(tree, root),
        parent_span_id=parent,
    )


def _steps(tree: Tree, classified: dict[str, Classified], region: list[str]) -> list[Step]:
    calls = [(tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, LLMFacts)]
    # Node.js timestamps are whole milliseconds: a growing history breaks ties between calls.
    calls.sort(key=lambda sf: (sf[0].start_ns, len(sf[1].input_messages), sf[0].end_ns, tree.order[sf[0].span_id]))
    return [
        Step(i, span, facts, requested_calls(facts.output_messages)) for i, (span, facts) in enumerate(calls, start=1)
    ]


def _messages(run: RunFacts, steps: list[Step]) -> list[dict[str, Any]]:
    """The whole conversation: the longer of the run span's history and the last model call's
    input plus output (a failed run's history often stops before its last response)."""
    last = next((s for s in reversed(steps) if s.facts.input_messages or s.facts.output_messages), None)
    from_calls = [*last.facts.input_messages, *last.facts.output_messages] if last else []
    best = run.messages if len(run.messages) >= len(from_calls) else from_calls
    if best:
        return best
    out = []
    if run.input:
        out.append(msg.message("user", run.input))
    if run.output:
        out.append(msg.message("assistant", run.output))
    return out


def _status(span: Span) -> tuple[str, str | None]:
    exceptions = [e for e in span.events if e.name == "exception"]
    if not is_error(span) and (span.status_code == STATUS_OK or not exceptions):
        return "ok", None
    if span.status_message:
        return "error", span.status_message
    for event in exceptions:
        kind, message = event.attributes.get("exception.type"), event.attributes.get("exception.message")
        described = ": ".join(str(p) for p in (kind, message) if p)
        if described:
            return "error", described
    return "error", text(span.attributes.get("error.type")) or "error"


def _majority_dialect(classified: dict[str, Classified], region: list[str]) -> str:
    counts: dict[str, int] = {}
    for s in region:
        if s in classified:
            counts[classified[s].dialect] = counts.get(classified[s].dialect, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else "unknown"


def _agent_name_in(tree: Tree, region: list[str]) -> str | None:
    for s in region:
        attrs = tree.spans[s].attributes
        for key in _AGENT_NAME_KEYS:
            if isinstance(attrs.get(key), str) and attrs[key]:
                return str(attrs[key])
    return None


def _attributes(span: Span) -> dict[str, Any]:
    out = dict(span.resource)
    for key, value in span.attributes.items():
        if key not in _BLOBS and not key.startswith(_BLOB_PREFIXES):
            out[key] = value
    return out


def _ground_truth(tree: Tree, root: str) -> Any:
    for sid in (root, *tree.ancestors(root)):
        value = tree.spans[sid].attributes.get(GROUND_TRUTH)
        if value is not None:
            return msg.parse_json_maybe(value)
    return tree.spans[root].resource.get(GROUND_TRUTH)


def _rfc3339(ns: int) -> str | None:
    if not ns:
        return None
    stamp = datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="microseconds")
    return stamp.replace("+00:00", "Z")
