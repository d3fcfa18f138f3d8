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

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from otelgrade.rebuild import genai, openinference, pydantic_ai, traceloop, vercel
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.facts import LLMFacts, RequestedCall, RunFacts, ToolFacts, requested_calls
from otelgrade.rebuild.fields import is_error, text
from otelgrade.rebuild.tree import Tree
from otelgrade.spans import STATUS_OK, LogEvent, Span
from otelgrade.trajectory import LLMCall, ToolCall, Trajectory

Facts = RunFacts | LLMFacts | ToolFacts
Reader = Callable[[Span], Facts | None]

# Most specific first: the generic GenAI reader claims whatever the others leave.
DIALECTS: tuple[tuple[str, Reader], ...] = (
    (openinference.NAME, openinference.read),
    (vercel.NAME, vercel.read),
    (pydantic_ai.NAME, pydantic_ai.read),
    (traceloop.NAME, traceloop.read),
    (genai.NAME, genai.read),
)

# Run-span attributes that hold whole conversations or schemas: kept out of `attributes`.
_BLOBS = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "pydantic_ai.all_messages",
        "all_messages_events",
        "events",
        "model_request_parameters",
        "logfire.json_schema",
        "ai.prompt",
        "ai.prompt.messages",
        "ai.prompt.tools",
        "input.value",
        "output.value",
    }
)
_BLOB_PREFIXES = ("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.")
GROUND_TRUTH = "otelgrade.ground_truth"


@dataclass(slots=True)
class _Classified:
    dialect: str
    facts: Facts


@dataclass(slots=True)
class _Step:
    index: int
    span: Span
    facts: LLMFacts
    calls: list[RequestedCall] = field(default_factory=list)


def classify(span: Span) -> _Classified | None:
    """The first dialect that recognises the span, with what it read. Never raises."""
    for name, reader in DIALECTS:
        try:
            facts = reader(span)
        except Exception:  # a span no reader anticipated must not cost the run
            continue
        if facts is not None:
            return _Classified(name, facts)
    return None


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


def _run_roots(tree: Tree, classified: dict[str, _Classified], agents: set[str]) -> list[str]:
    roots = []
    stop = frozenset(agents)
    for sid in sorted(agents, key=tree.order.__getitem__):
        region = tree.walk(sid, stop)
        works = any(isinstance(getattr(classified.get(s), "facts", None), (LLMFacts, ToolFacts)) for s in region)
        wraps = any(c in agents for s in region for c in tree.children.get(s, ()))
        if works or not wraps:
            roots.append(sid)
    return roots


def _run_facts(classified: dict[str, _Classified], root: str) -> RunFacts:
    found = classified.get(root)
    return found.facts if found is not None and isinstance(found.facts, RunFacts) else RunFacts()


def _trajectory(
    tree: Tree, classified: dict[str, _Classified], root: str, region: list[str], parent: str | None
) -> Trajectory:
    span = tree.spans[root]
    run = _run_facts(classified, root)
    steps = _steps(tree, classified, region)
    tools = _tool_calls(tree, classified, region, steps)
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


def _steps(tree: Tree, classified: dict[str, _Classified], region: list[str]) -> list[_Step]:
    calls = [(tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, LLMFacts)]
    # Node.js timestamps are whole milliseconds: a growing history breaks ties between calls.
    calls.sort(key=lambda sf: (sf[0].start_ns, len(sf[1].input_messages), sf[0].end_ns, tree.order[sf[0].span_id]))
    return [
        _Step(i, span, facts, requested_calls(facts.output_messages)) for i, (span, facts) in enumerate(calls, start=1)
    ]


def _tool_calls(
    tree: Tree, classified: dict[str, _Classified], region: list[str], steps: list[_Step]
) -> list[ToolCall]:
    """Tool calls ordered by the response that requested them, then their order in it.

    Each requested call takes its execution span: by call id, else by name and equal arguments,
    else by name alone, in order. Executions no response asked for (content not captured) are
    placed by their parent LLM span, else by time, after that step's requested calls.
    """
    executions = [
        (tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, ToolFacts)
    ]
    executions.sort(key=lambda sf: (sf[0].start_ns, tree.order[sf[0].span_id]))
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
    return _canonical(a) == _canonical(b)


def _canonical(value: Any) -> Any:
    value = msg.parse_json_maybe(value)
    if isinstance(value, str):
        return value.strip()
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _conversation_results(steps: list[_Step]) -> dict[str, str]:
    """Tool results by call id, as later model requests show them."""
    out: dict[str, str] = {}
    for step in steps:
        for m in step.facts.input_messages:
            if m.get("role") == "tool" and m.get("tool_call_id") and isinstance(m.get("content"), str):
                out.setdefault(m["tool_call_id"], m["content"])
    return out


def _messages(run: RunFacts, steps: list[_Step]) -> list[dict[str, Any]]:
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


def _majority_dialect(classified: dict[str, _Classified], region: list[str]) -> str:
    counts: dict[str, int] = {}
    for s in region:
        if s in classified:
            counts[classified[s].dialect] = counts.get(classified[s].dialect, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else "unknown"


def _agent_name_in(tree: Tree, region: list[str]) -> str | None:
    for s in region:
        attrs = tree.spans[s].attributes
        for key in ("gen_ai.agent.name", "agent.name", "agent_name"):
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
            if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
                parsed = msg.loads(value)
                return value if parsed is None else parsed
            return value
    return tree.spans[root].resource.get(GROUND_TRUTH)


def _rfc3339(ns: int) -> str | None:
    if not ns:
        return None
    stamp = datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="microseconds")
    return stamp.replace("+00:00", "Z")
