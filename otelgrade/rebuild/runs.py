"""Assemble agent runs from classified spans: pick run roots, then build one `Trajectory` each.

Which spans are runs, in the conventions' terms:
- An agent span (any dialect) is a run when it does work of its own (an LLM call or tool execution
  outside any nested agent span) or contains no other agent span; one that only wraps other agent
  spans (OpenAI Agents' `Agent workflow`, a Traceloop workflow) is not, nor is an empty one.
- A tool execution whose subtree holds LLM calls outside any agent span is an agent called as a tool:
  a nested run, and also its parent's tool call.
- With neither, each topmost chain/workflow span that holds work is a run (LlamaIndex workflows);
  spans whose parent never arrived are one run under that missing parent (an agent span lost when
  its process failed). Else the trace root is the one run.
A graph or workflow node is a step of its run, never a run of its own.

A nested run (sub-agent, agent-as-tool) has `parent_span_id` set to the enclosing run; the parent
keeps only its own LLM and tool calls. A handoff (the new agent records whom it took over from, or
follows a sibling run that ended with a `transfer_to_*` call) links the same way, and the new run's
input is the request it took over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import DIALECTS, Classified, classify
from otelgrade.rebuild.facts import ChainFacts, LLMFacts, RunFacts, Step, ToolFacts, requested_calls
from otelgrade.rebuild.span_readers import duration_s, is_error, text
from otelgrade.rebuild.tool_calls import tool_calls
from otelgrade.rebuild.tree import Tree
from otelgrade.spans import STATUS_OK, LogEvent, Span
from otelgrade.trajectory import PARTS, LLMCall, Part, ToolCall, Trajectory

# Run-span attributes that hold whole conversations or schemas: kept out of `attributes`.
_BLOBS = frozenset().union(*(d.blobs for d in DIALECTS))
_BLOB_PREFIXES = tuple(p for d in DIALECTS for p in d.blob_prefixes)
_AGENT_NAME_KEYS = tuple(dict.fromkeys(k for d in DIALECTS for k in d.agent_name_keys))
GROUND_TRUTH = "otelgrade.ground_truth"


@dataclass(slots=True)
class Run:
    """A run before it is built: its root span, the spans whose subtrees it covers, and how it was found."""

    root: Span
    tops: list[str]
    facts: RunFacts
    tool_root: bool = False  # the root is an agent called as a tool: the parent's tool call, not this run's


Notes = dict[str, str]
"""Why a span is not what its kind suggests (span id -> reason), for `otelgrade inspect`."""


def rebuild_trace(
    spans: Sequence[Span], logs: Sequence[LogEvent] = (), notes: Notes | None = None, dialects: Sequence[Dialect] = ()
) -> list[Trajectory]:
    """Every agent run of one trace, ordered by start time. `dialects` (from the config's mappings) are asked
    before the built-in ones; `notes` collects why spans were set aside."""
    if not spans:
        return []
    notes = {} if notes is None else notes
    tree = Tree(spans, logs)
    classified = {sid: c for sid, span in tree.spans.items() if (c := classify(span, dialects)) is not None}
    runs = _find_runs(tree, classified, notes)
    stop = frozenset(top for run in runs for top in run.tops)
    regions = {run.root.span_id: [s for top in run.tops for s in tree.walk(top, stop)] for run in runs}
    for run in runs:
        if run.tool_root:  # the tool span itself belongs to the run that called it
            regions[run.root.span_id].remove(run.root.span_id)
            caller = next((r for r in runs if tree.parent.get(run.root.span_id) in regions[r.root.span_id]), None)
            if caller is not None:
                regions[caller.root.span_id].append(run.root.span_id)
    built = {run.root.span_id: _trajectory(tree, classified, run, regions[run.root.span_id], notes) for run in runs}
    _link(tree, runs, built)
    return sorted(built.values(), key=lambda t: (t.start_time or "", tree.order.get(t.span_id, -1)))


def _find_runs(tree: Tree, classified: dict[str, Classified], notes: Notes) -> list[Run]:
    agents = set()
    for sid, c in classified.items():
        if isinstance(c.facts, RunFacts):
            if _empty(tree, sid, c.facts):
                notes[sid] = "an agent span with nothing under it: a framework's placeholder, not a run"
            else:
                agents.add(sid)
    roots = _agent_roots(tree, classified, agents)
    for sid in agents.difference(roots):
        notes[sid] = "an agent span that only wraps other agent spans: not a run of its own"
    runs = [Run(tree.spans[r], [r], _run_facts(classified, r)) for r in roots]
    stop = frozenset(agents)
    for sid, c in classified.items():
        if isinstance(c.facts, ToolFacts) and any(_is_llm(classified, d) for d in tree.walk(sid, stop)[1:]):
            runs.append(Run(tree.spans[sid], [sid], RunFacts(agent_name=c.facts.name), tool_root=True))
            notes[sid] = "a tool whose work holds model calls: an agent called as a tool, a nested run"
    if runs:
        return runs
    runs = _chain_runs(tree, classified)
    for run in runs:
        if run.root.span_id not in tree.spans:
            notes[run.root.span_id] = "never arrived: its children stand for it (the run's agent span was lost)"
    if runs:
        return runs
    return [Run(tree.spans[tree.roots[0]], list(tree.roots), RunFacts())]


def _agent_roots(tree: Tree, classified: dict[str, Classified], agents: set[str]) -> list[str]:
    roots = []
    stop = frozenset(agents)
    for sid in sorted(agents, key=tree.order.__getitem__):
        region = tree.walk(sid, stop)
        works = any(isinstance(getattr(classified.get(s), "facts", None), (LLMFacts, ToolFacts)) for s in region)
        wraps = any(c in agents for s in region for c in tree.children.get(s, ()))
        if works or not wraps:
            roots.append(sid)
    return roots


def _empty(tree: Tree, sid: str, facts: RunFacts) -> bool:
    """An agent span with nothing under it and nothing on it (a framework's placeholder)."""
    span = tree.spans[sid]
    said = facts.input or facts.output or facts.messages or facts.calls
    return not tree.children.get(sid) and not span.events and not is_error(span) and not said


def _is_llm(classified: dict[str, Classified], sid: str) -> bool:
    found = classified.get(sid)
    return found is not None and isinstance(found.facts, LLMFacts)


def _chain_runs(tree: Tree, classified: dict[str, Classified]) -> list[Run]:
    """Topmost chain spans that hold work, one run each; orphans grouped under their missing parent."""

    def is_chain(sid: str) -> bool:
        found = classified.get(sid)
        return found is not None and isinstance(found.facts, ChainFacts)

    tops = [
        sid
        for sid in tree.order
        if is_chain(sid)
        and not any(is_chain(a) for a in tree.ancestors(sid))
        and any(isinstance(getattr(classified.get(d), "facts", None), (LLMFacts, ToolFacts)) for d in tree.walk(sid))
    ]
    runs: list[Run] = []
    lost: dict[str, list[str]] = {}  # missing parent id -> its orphaned chain spans
    for sid in tops:
        parent_id = tree.spans[sid].parent_id
        if tree.parent.get(sid) is None and parent_id:
            lost.setdefault(parent_id, []).append(sid)
        else:
            runs.append(Run(tree.spans[sid], [sid], RunFacts()))
    for parent_id, orphans in lost.items():
        runs.append(Run(_missing_span(tree, parent_id, orphans), orphans, RunFacts()))
    return runs


def _missing_span(tree: Tree, span_id: str, children: list[str]) -> Span:
    """A stand-in for a span that never arrived, from what its children say: ids, times, and failure."""
    spans = [tree.spans[c] for c in children]
    failed = next((s for s in spans if is_error(s)), None)
    return Span(
        trace_id=spans[0].trace_id,
        span_id=span_id,
        parent_id=None,
        name="",
        kind=0,
        start_ns=min(s.start_ns for s in spans),
        end_ns=max(s.end_ns for s in spans),
        status_code=failed.status_code if failed else 0,
        status_message=failed.status_message if failed else "",
        attributes={},
        events=list(failed.events) if failed else [],
        resource=spans[0].resource,
    )


def _link(tree: Tree, runs: list[Run], built: dict[str, Trajectory]) -> None:
    """Set each run's `parent_span_id`: the enclosing run, else the run it took over from (a handoff,
    whose request the new run inherits)."""
    by_start = sorted(runs, key=lambda r: r.root.start_ns)
    for run in runs:
        trajectory = built[run.root.span_id]
        parent = next((a for a in tree.ancestors(run.root.span_id) if a in built), None)
        if parent is not None:
            trajectory.parent_span_id = parent
            continue
        handed = run.facts.handed_off_from
        source = next(
            (
                r
                for r in by_start
                if r is not run
                and r.root.start_ns <= run.root.start_ns
                and (
                    (handed and built[r.root.span_id].agent_name == handed)
                    or _transferred(tree, r, run, built[r.root.span_id], trajectory.agent_name)
                )
            ),
            None,
        )
        if source is not None:
            handing = built[source.root.span_id]
            trajectory.parent_span_id = source.root.span_id
            trajectory.input = handing.input or trajectory.input
            _handoff_result(handing, trajectory)


def _handoff_result(handing: Trajectory, receiving: Trajectory) -> None:
    """The handoff call's result, when its own run does not show it: what the receiving agent's first model
    call was told for that call id."""
    if not handing.tool_calls or not receiving.llm_calls:
        return
    call = handing.tool_calls[-1]
    if call.result is None and not call.error and call.call_id:
        told = msg.tool_results(receiving.llm_calls[0].input_messages)
        call.result = told.get(call.call_id)


def _transferred(tree: Tree, earlier: Run, later: Run, trajectory: Trajectory, later_name: str | None) -> bool:
    """A run that ended by calling a `transfer_to_*` tool handed over to the run after it: the one that call
    names (`transfer_to_billing_agent`, or `transfer_to_agent` with the agent's name as an argument), or
    else its sibling."""
    calls = trajectory.tool_calls
    if not calls or not calls[-1].name.startswith("transfer_to") or earlier.root.end_ns > later.root.start_ns:
        return False
    call = calls[-1]
    arguments = call.arguments.values() if isinstance(call.arguments, dict) else ()
    if later_name and (call.name == f"transfer_to_{later_name}" or later_name in arguments):
        return True
    return tree.parent.get(earlier.root.span_id) == tree.parent.get(later.root.span_id) is not None


def _run_facts(classified: dict[str, Classified], root: str) -> RunFacts:
    found = classified.get(root)
    return found.facts if found is not None and isinstance(found.facts, RunFacts) else RunFacts()


def _trajectory(tree: Tree, classified: dict[str, Classified], run: Run, region: list[str], notes: Notes) -> Trajectory:
    span = run.root
    steps = _steps(tree, classified, region, [(span, call) for call in run.facts.calls], notes)
    executions = [
        (tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, ToolFacts)
    ]
    tools, answer = tool_calls(tree, executions, steps, run.facts.tool_records, notes)
    messages = _messages(run.facts, steps)

    first_input = steps[0].facts.input_messages if steps else []
    request = (
        run.facts.input or msg.last_user_text(first_input) or msg.last_user_text(messages) or run.facts.fallback_input
    )
    status, error = _status(span)
    output = run.facts.output if run.facts.output is not None else answer
    if output is None and steps and not steps[-1].calls:
        output = msg.assistant_text(steps[-1].facts.output_messages)
    output = output.strip() or None if output and status == "ok" else None  # a failed run has no answer

    dialect = run_dialect(classified, span.span_id, region)
    agent_name = run.facts.agent_name or _agent_name_in(tree, region) or span.name or None
    return Trajectory(
        trace_id=span.trace_id,
        span_id=span.span_id,
        service_name=text(span.resource.get("service.name")),
        agent_name=agent_name,
        environment=_environment(span.resource),
        source=dialect,
        input=request,
        output=output,
        status=status,
        error=error,
        start_time=_rfc3339(span.start_ns),
        end_time=_rfc3339(span.end_ns),
        duration_s=duration_s(span),
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
                duration_s=None if _recorded(s, run) else duration_s(s.span),
            )
            for s in steps
        ],
        tool_calls=tools,
        messages=messages,
        steps=len(steps),
        attributes=_attributes(span),
        ground_truth=_ground_truth(tree, span),
        lacks=_lacks(run, steps, tools, request, messages),
    )


def _recorded(step: Step, run: Run) -> bool:
    """A model call known only from the run span's record of it (no span of its own, so no duration)."""
    return any(step.facts is call for call in run.facts.calls)


def _lacks(run: Run, steps: list[Step], tools: list[ToolCall], request: str | None, messages: list[Any]) -> list[Part]:
    """The parts this run's trace does not carry. With no message content anywhere (content capture off),
    none of the content parts is there; with content, the request when none shows and tool arguments when
    no call has any; without a single model-call span, the LLM calls."""
    content = bool(
        messages
        or run.facts.input
        or run.facts.output
        or any(s.facts.input_messages or s.facts.output_messages for s in steps)
    )
    lacking: set[Part] = set()
    if not content:
        lacking |= {"input", "output", "messages", "tool_arguments", "tool_results"}
    else:
        if request is None:
            lacking.add("input")
        if tools and all(t.arguments is None for t in tools):
            lacking.add("tool_arguments")
    if not steps and tools:
        lacking.add("llm_calls")
    if run.facts.calls and is_error(run.root):
        lacking.add("llm_calls")  # calls known only from records of successful calls: the failed one left none
    return [part for part in PARTS if part in lacking]


def _steps(
    tree: Tree,
    classified: dict[str, Classified],
    region: list[str],
    recorded: list[tuple[Span, LLMFacts]],
    notes: Notes,
) -> list[Step]:
    """The run's model calls, in order. A wrapper span and the client span of the same call are one call
    (the innermost counts); while the run captures content, an LLM span that shows no exchange at all
    (no messages, usage, response or failure) made no call (a framework's preparation step)."""
    found = [(tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, LLMFacts)]
    ids = {span.span_id for span, _ in found}
    inner = []
    for span, f in found:
        wrapped = _descendants_llm(tree, span.span_id, ids)
        if wrapped:
            notes[span.span_id] = f"wraps the model call of span {wrapped[-1]}: one LLM call, counted there"
        else:
            inner.append((span, f))
    content = any(f.input_messages or f.output_messages for _, f in inner)
    calls = []
    for span, f in inner:
        if content and not _exchanged(span, f):
            notes[span.span_id] = "an LLM span with no messages, usage, response or failure: it made no model call"
        else:
            calls.append((span, f))
    calls += recorded
    # Node.js timestamps are whole milliseconds: a growing history breaks ties between calls.
    calls.sort(key=lambda sf: (sf[0].start_ns, len(sf[1].input_messages), sf[0].end_ns, tree.order[sf[0].span_id]))
    return [
        Step(i, span, facts, requested_calls(facts.output_messages)) for i, (span, facts) in enumerate(calls, start=1)
    ]


def _descendants_llm(tree: Tree, span_id: str, llm_ids: set[str]) -> list[str]:
    return [d for d in tree.walk(span_id)[1:] if d in llm_ids]


def _exchanged(span: Span, facts: LLMFacts) -> bool:
    return bool(
        facts.input_messages
        or facts.output_messages
        or facts.input_tokens is not None
        or facts.output_tokens is not None
        or facts.finish_reason
        or is_error(span)
    )


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


def _status(span: Span) -> tuple[Literal["ok", "error"], str | None]:
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


def run_dialect(classified: dict[str, Classified], root: str, region: list[str]) -> str:
    """The dialect that read the run's root span, else the one that read most of its spans."""
    if root in classified:
        return classified[root].dialect
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


def _environment(resource: Mapping[str, Any]) -> str | None:
    """The deployment environment: `deployment.environment.name`, else the older `deployment.environment`."""
    return text(resource.get("deployment.environment.name")) or text(resource.get("deployment.environment"))


def _attributes(span: Span) -> dict[str, Any]:
    out = dict(span.resource)
    for key, value in span.attributes.items():
        if key not in _BLOBS and not key.startswith(_BLOB_PREFIXES):
            out[key] = value
    return out


def _ground_truth(tree: Tree, root: Span) -> Any:
    for span in (root, *(tree.spans[a] for a in tree.ancestors(root.span_id))):
        value = span.attributes.get(GROUND_TRUTH)
        if value is not None:
            return msg.parse_json_maybe(value)
    return root.resource.get(GROUND_TRUTH)


def _rfc3339(ns: int) -> str | None:
    if not ns:
        return None
    stamp = datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="microseconds")
    return stamp.replace("+00:00", "Z")
