"""Find each agent's own runs in classified spans and build one `Trajectory` each (`requests` then groups them
into the requests users made).

Which spans are runs, in the conventions' terms:
- An agent span (any dialect) is a run when it does work of its own (an LLM call or tool execution
  outside any nested agent span) or contains no other agent span; one that only wraps other agent
  spans (OpenAI Agents' `Agent workflow`, a Traceloop workflow) is not, nor is an empty one.
- A tool execution whose subtree holds LLM calls outside any agent span is an agent called as a tool:
  a nested run, and also its parent's tool call.
- With neither, each topmost chain/workflow span that holds work is a run (LlamaIndex workflows);
  spans whose parent never arrived are one run under that missing parent (an agent span lost when
  its process failed). With none of those, model calls alone make runs, one per conversation (a call
  whose input does not continue the previous call's conversation starts the next run; with no content, each
  application span, none inside another, that holds calls is a run: one invocation of the loop). A trace with
  no recognizable agent or model call has no run, unless spans no dialect understood carry an AI
  instrumentation's marks: then the trace root is a run that lacks what they would hold.
A graph or workflow node is a step of its run, never a run of its own.

A nested run (sub-agent, agent-as-tool) has `parent_span_id` set to the enclosing run; the parent
keeps only its own LLM and tool calls. A handoff (the new agent records whom it took over from, or
follows a run that ended on a call its model never saw the result of) links the same way (`requests`), and
the new run's input is the request it took over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from otelgrade.core.spans import STATUS_OK, Span
from otelgrade.core.trajectory import PARTS, LLMCall, Part, ToolCall, Trajectory
from otelgrade.rebuild import layers
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.continuations import join_called_conversations, split_after_answers, split_by_continuation
from otelgrade.rebuild.dialects import DIALECTS, Classified
from otelgrade.rebuild.facts import ChainFacts, LLMFacts, RequestedCall, RunFacts, Step, ToolFacts, requested_calls
from otelgrade.rebuild.outputs import recorded_answer, reports_failure, unanswered
from otelgrade.rebuild.roles import declared_role
from otelgrade.rebuild.span_readers import duration_s, failed, is_control_flow, is_error, text
from otelgrade.rebuild.systems import by_application_span
from otelgrade.rebuild.tool_calls import tool_calls
from otelgrade.rebuild.transfers import is_transfer, named_agent, target_argument
from otelgrade.rebuild.tree import Tree
from otelgrade.rebuild.unread import describe, would_hold

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
    agent: bool = True  # the root is an agent's invocation (not a chain, a conversation of model calls, the trace)
    name: str | None = None  # what to call the run when no span names its agent (an agent-as-tool's tool name)
    unread: frozenset[str] = frozenset()  # spans with an instrumentation's marks that were read as no work of this run


Notes = dict[str, str]
"""Why a span is not what its kind suggests (span id -> reason), for `otelgrade inspect`."""


def find_runs(tree: Tree, classified: dict[str, Classified], notes: Notes) -> list[Run]:
    """Every agent's own runs, in the order of the rules above."""
    agents = set()
    placeholders: dict[str, RunFacts] = {}
    for sid, c in classified.items():
        if isinstance(c.facts, RunFacts):
            if _empty(tree, sid, c.facts):
                notes[sid] = "an agent span with nothing under it: a framework's placeholder, not a run"
                placeholders[sid] = c.facts
            else:
                agents.add(sid)
    llm_ids = {sid for sid, c in classified.items() if isinstance(c.facts, LLMFacts)}
    invoked = _marked_by_placeholders(tree, classified, placeholders, agents, llm_ids)
    agents.update(invoked)
    roots = _agent_roots(tree, classified, agents)
    for sid in agents.difference(roots):
        notes[sid] = "an agent span that only wraps other agent spans: not a run of its own"
    runs = [Run(tree.spans[r], [r], invoked.get(r) or _run_facts(classified, r)) for r in roots]
    holding_llm = tree.holding(llm_ids, stop=agents)
    for sid, c in classified.items():
        if isinstance(c.facts, ToolFacts) and sid in holding_llm:
            name = target_argument(c.facts.arguments) or named_agent(c.facts.name, None) or c.facts.name
            runs.append(Run(tree.spans[sid], [sid], RunFacts(), tool_root=True, name=name))
            notes[sid] = "a tool whose work holds model calls: an agent called as a tool, a nested run"
    if runs:
        return runs
    runs = _chain_runs(tree, classified)
    for run in runs:
        if run.root.span_id not in tree.spans:
            notes[run.root.span_id] = "never arrived: its children stand for it (the run's agent span was lost)"
    if runs:
        return runs
    runs = conversation_runs(tree, classified, llm_ids, notes)
    marked = frozenset(sid for sid in tree.spans if would_hold(tree.spans[sid]))
    if runs or not marked:
        return runs
    # Spans that look like an agent's work, none read as such (an empty agent span, a tool of no convention): the
    # trace root is a run that lacks what they would hold, so no grader passes it on what was not read.
    return [Run(tree.spans[tree.roots[0]], list(tree.roots), RunFacts(), agent=False, unread=marked)]


def _marked_by_placeholders(
    tree: Tree,
    classified: dict[str, Classified],
    placeholders: dict[str, RunFacts],
    agents: set[str],
    llm_ids: set[str],
) -> dict[str, RunFacts]:
    """Spans an empty agent span marks as its agent's invocation: its parent, when the parent is no agent span and
    holds model calls (Traceloop's LangGraph hook records each graph's invocation as an empty `invoke_agent`
    beside the task spans that do its work)."""
    if not placeholders:
        return {}
    holding = tree.holding(llm_ids, stop=agents)
    marked: dict[str, RunFacts] = {}
    for sid, facts in placeholders.items():
        parent = tree.parent.get(sid)
        if parent is not None and parent not in classified and parent in holding and facts.agent_name:
            marked.setdefault(parent, RunFacts(agent_name=facts.agent_name))
    return marked


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
    signals_only = all(is_control_flow(e) for e in span.events)  # LangGraph routes control by raising
    return not tree.children.get(sid) and signals_only and not failed(span) and not said


def _chain_runs(tree: Tree, classified: dict[str, Classified]) -> list[Run]:
    """Topmost chain spans that hold work, one run each; orphans grouped under their missing parent."""

    chains = {sid for sid, c in classified.items() if isinstance(c.facts, ChainFacts)}
    work = {sid for sid, c in classified.items() if isinstance(c.facts, LLMFacts | ToolFacts)}
    holding_work = tree.holding(work)
    under_chain = tree.nearest(chains)
    tops = [sid for sid in tree.order if sid in chains and sid not in under_chain and sid in holding_work]
    runs: list[Run] = []
    lost: dict[str, list[str]] = {}  # missing parent id -> its orphaned chain spans
    for sid in tops:
        parent_id = tree.spans[sid].parent_id
        if tree.parent.get(sid) is None and parent_id:
            lost.setdefault(parent_id, []).append(sid)
        else:
            runs.append(Run(tree.spans[sid], [sid], RunFacts(), agent=False))
    for parent_id, orphans in _called_in_steps(tree, chains, lost).items():
        runs.append(Run(_missing_span(tree, parent_id, orphans), orphans, RunFacts(), agent=False))
    return runs


def _called_in_steps(tree: Tree, chains: set[str], lost: dict[str, list[str]]) -> dict[str, list[str]]:
    """Orphaned spans under a missing parent that ran wholly inside a step of another such group, after that
    step began (an agent the step called, whose own span and the call's never arrived, as when the call failed)
    are that group's: one run, not a request of their own."""
    if len(lost) < 2:
        return lost
    window = {
        p: (min(tree.spans[o].start_ns for o in orphans), max(tree.spans[o].end_ns for o in orphans))
        for p, orphans in lost.items()
    }
    into: dict[str, str] = {}
    for p, (start, end) in window.items():
        for q, orphans in lost.items():
            steps = [tree.spans[o] for o in orphans if o in chains]
            if q != p and any(s.start_ns < start and end <= s.end_ns for s in steps):
                into[p] = q
    out: dict[str, list[str]] = {}
    for p, orphans in lost.items():
        q = p
        while q in into and into[q] != p:
            q = into[q]
        out.setdefault(q, []).extend(orphans)
    return out


def conversation_runs(tree: Tree, classified: dict[str, Classified], llm_ids: set[str], notes: Notes) -> list[Run]:
    """Model calls with no agent or chain span: one run per conversation. With one conversation the trace's
    root stands for the run; with several, each run is the largest subtree holding its calls alone (the first
    call itself when they share a parent), with the tool spans beside them that started during it."""
    found = {s: _llm_facts(classified, s) for s in llm_ids}
    said = {sid: f for sid, (f, _) in innermost_calls(tree, found).items()}
    calls = sorted(
        said, key=lambda sid: (called_at(tree.spans[sid], said[sid]), len(said[sid].input_messages), tree.order[sid])
    )
    ordered = [(sid, said[sid]) for sid in calls]
    times = {sid: (tree.spans[sid].start_ns, tree.spans[sid].end_ns) for sid in calls}
    groups = join_called_conversations(ordered, split_by_continuation(ordered), times)
    if len(groups) == 1 and not any(_said_text(f) for f in said.values()):
        # no text to split by (at most the calls a response asked for): the application's spans, else the answers
        # that ended a loop
        groups = by_application_span(tree, calls) or split_after_answers([(sid, said[sid]) for sid in calls])
    if len(groups) <= 1:
        return [Run(tree.spans[tree.roots[0]], list(tree.roots), RunFacts(), agent=False)] if groups else []
    beside = layers.side_by_side(tree, found)  # each call's other layer goes with it
    groups = [[*ids, *(beside[sid] for sid in ids if sid in beside)] for ids in groups]
    below = tree.owners({sid: g for g, ids in enumerate(groups) for sid in ids})
    runs = []
    for g, ids in enumerate(groups):
        tops = []  # the largest subtrees holding this conversation's calls alone
        for top in ids:
            while (parent := tree.parent[top]) is not None and below.get(parent) == g:
                top = parent
            if top not in tops:
                tops.append(top)
        runs.append(Run(tree.spans[tops[0]], tops, RunFacts(), agent=False))
    covered = {sid for run in runs for top in run.tops for sid in tree.walk(top)}
    starts = [tree.spans[ids[0]].start_ns for ids in groups]
    for sid, c in classified.items():
        if isinstance(c.facts, ToolFacts) and sid not in covered and sid not in below:
            g = max((g for g, start in enumerate(starts) if start <= tree.spans[sid].start_ns), default=0)
            runs[g].tops.append(sid)
    for run in runs:
        if len(run.tops) > 1:  # its first call's subtree stands for the run, its times covering the conversation
            last = max(tree.spans[s].end_ns for s in run.tops)
            run.root = dataclasses.replace(run.root, end_ns=last, status_code=0, status_message="", events=[])
            notes.setdefault(run.root.span_id, "a model call that starts a conversation: the root of its run")
    return runs


def _said_text(facts: LLMFacts) -> bool:
    """Whether a model call shows any message text (its inputs, or a response's text beyond the calls it asked for)."""
    return bool(facts.input_messages) or any(m.get("content") for m in facts.output_messages)


def innermost_calls(
    tree: Tree, found: dict[str, LLMFacts], agents: Collection[str] = ()
) -> dict[str, tuple[LLMFacts, bool]]:
    """The model calls among LLM spans (`found`, in tree order), each with whether it failed: a wrapper span and
    the client span of the same call are one call, the innermost, with its wrapper's record of the exchange when
    the client span shows none (and what else it lacks: the finish reason, the usage), and failed when either span
    did. A sibling span of the same call (`layers`) wraps it the same way. A wrapper whose record says a call
    failed while none beneath it did made that call itself (a callback's record of a failed call, which left no
    span of its own): it is a call, after theirs. An LLM span holding another only through an agent's invocation
    (`agents`: one agent run inside another's model call) wraps nothing: two calls."""
    wrappers = tree.holding(found.keys(), stop=agents)
    wrappers -= {w for w in wrappers & found.keys() if found[w].failed and not _failure_below(tree, found, w)}
    wrapper_of = tree.nearest(wrappers & found.keys())
    beside = layers.side_by_side(tree, found) if len(found) > 1 else {}
    wrapper_of.update(beside)
    wrappers.update(beside.values())
    calls = {}
    for sid, facts in found.items():
        if sid in wrappers:
            continue
        outer_id = wrapper_of.get(sid)
        outer = found.get(outer_id or "")
        bare = not (facts.input_messages or facts.output_messages)
        failed = facts.failed or is_error(tree.spans[sid]) or (outer_id is not None and is_error(tree.spans[outer_id]))
        kept = outer if outer is not None and bare and outer.input_messages else facts
        calls[sid] = (_completed(kept, outer if kept is facts else facts), failed)
    return calls


def _failure_below(tree: Tree, found: Mapping[str, LLMFacts], wrapper: str) -> bool:
    return any(s in found and (found[s].failed or is_error(tree.spans[s])) for s in tree.walk(wrapper)[1:])


def called_at(span: Span, facts: LLMFacts) -> int:
    """When a call was made, to order calls by: its span's start; for a callback's record of the last call on a
    span not the call's own, the span's end (written when that call was logged, after the calls beneath it)."""
    return span.end_ns if facts.overwritten else span.start_ns


def _completed(facts: LLMFacts, other: LLMFacts | None) -> LLMFacts:
    """A call's record with what the other record of the same call adds (finish reason, usage, model)."""
    if other is None or other is facts:
        return facts
    missing = {
        key: getattr(other, key)
        for key in ("finish_reason", "input_tokens", "output_tokens", "model", "provider")
        if getattr(facts, key) is None and getattr(other, key) is not None
    }
    return dataclasses.replace(facts, **missing) if missing else facts


def _llm_facts(classified: dict[str, Classified], span_id: str) -> LLMFacts:
    facts = classified[span_id].facts
    assert isinstance(facts, LLMFacts)
    return facts


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


def _run_facts(classified: dict[str, Classified], root: str) -> RunFacts:
    found = classified.get(root)
    return found.facts if found is not None and isinstance(found.facts, RunFacts) else RunFacts()


def build(
    tree: Tree,
    classified: dict[str, Classified],
    run: Run,
    region: list[str],
    notes: Notes,
    agent_of: Mapping[str, str] | None = None,
    members: Sequence[Run] = (),
) -> Trajectory:
    """The run's trajectory from the spans of its region. For a run that holds several agents' work, `members`
    are their own runs (whose records of calls count too) and `agent_of` names the agent of each model call's
    span (or recording run span): each call and tool call then says whose it is."""
    span = run.root
    recorded = [(r.root, call) for r in (members or (run,)) for call in r.facts.calls]
    records = [t for r in (members or (run,)) for t in r.facts.tool_records]
    steps = _steps(tree, classified, region, recorded, notes)
    recorded_ids = {id(call) for _, call in recorded}
    executions = [
        (tree.spans[s], c.facts) for s in region if (c := classified.get(s)) and isinstance(c.facts, ToolFacts)
    ]
    tools, answer = tool_calls(tree, executions, steps, records, notes, returned=run.facts.output)
    _failed_in_their_step(tree, tools, steps)
    messages = _messages(run.facts, steps)

    first_input = steps[0].facts.input_messages if steps else []
    request = (
        run.facts.input
        or msg.last_user_text(first_input)
        or msg.last_user_text(messages)
        or run.facts.fallback_input
        or _step_input(classified, region)
    )
    status, error = _status(span)
    output = recorded_answer(run.facts.output)
    output = output if output is not None else answer
    if output is None and steps and not _asked_now(steps[-1]) and not steps[-1].failed:
        output = msg.assistant_text(steps[-1].facts.output_messages)
    if status == "ok" and steps and steps[-1].failed and (not output or reports_failure(output, steps[-1].span)):
        status, error = "error", _failure(steps[-1].span) or "the last model call failed"
    output = output.strip() or None if output and status == "ok" else None  # a failed run has no answer

    agents = agent_of or {}
    step_agent = {s.index: agents.get(s.span.span_id) for s in steps}
    for tool in tools:
        tool.agent = step_agent.get(tool.step)
    unread = [tree.spans[s] for s in region if (s not in classified or s in run.unread) and would_hold(tree.spans[s])]
    dialect = run_dialect(classified, span.span_id, region)
    agent_name = (
        run.facts.agent_name
        or _agent_name_in(tree, region)
        or run.name
        or declared_role(first_input)
        or span.name
        or None
    )
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
                duration_s=_call_duration(s, recorded_ids),
                error=s.failed,
                agent=step_agent[s.index],
            )
            for s in steps
        ],
        tool_calls=tools,
        messages=messages,
        steps=len(steps),
        attributes=_attributes(span),
        ground_truth=_ground_truth(tree, span),
        agents=list(dict.fromkeys(a for a in step_agent.values() if a)) if agent_of else [],
        lacks=_lacks(run, steps, tools, request, messages, unread, any(f.unnamed for _, f in executions)),
        unread=describe(unread),
        disagreements=unanswered(run.facts.output, output, status),
    )


def _step_input(classified: dict[str, Classified], region: list[str]) -> str | None:
    """The request the run's first step that records one was given (a graph node's input, with content capture
    off everywhere else)."""
    for sid in region:
        found = classified.get(sid)
        if found is not None and isinstance(found.facts, ChainFacts) and found.facts.input:
            return found.facts.input
    return None


def _call_duration(step: Step, recorded: set[int]) -> float | None:
    """The call span's duration; None for a model call known only from a run span's record of it."""
    return None if id(step.facts) in recorded else duration_s(step.span)


def _lacks(
    run: Run,
    steps: list[Step],
    tools: list[ToolCall],
    request: str | None,
    messages: list[Any],
    unread: list[Span],
    unnamed: bool = False,
) -> list[Part]:
    """The parts this run's trace does not carry. With no message content anywhere (content capture off or
    redacted), none of the content parts is there; with content, the request when none shows, the conversation
    and the tools' arguments and results when the model calls record no messages (a framework's spans that write
    the request and the answer whatever the content switch says), and tool arguments when no call has any;
    without a single model-call span, the LLM calls; the tool calls when an execution does not say which tool ran
    (`unnamed`); and whatever the spans no dialect understood would have held."""
    exchanged = any(s.facts.input_messages or s.facts.output_messages for s in steps)
    content = bool(messages or run.facts.input or run.facts.output or request or exchanged)
    lacking: set[Part] = set()
    if not content:
        lacking |= {"input", "output", "messages", "tool_arguments", "tool_results"}
    else:
        if request is None:
            lacking.add("input")
        if steps and not exchanged and not run.facts.messages:
            lacking |= {"messages", "tool_arguments", "tool_results"}  # the model calls' content is off
            if not run.facts.output and not is_error(run.root):
                lacking.add("output")  # and no span recorded the answer
        lacking |= _exchanges_unrecorded(run, steps, messages, tools)
        if tools and all(t.arguments is None for t in tools):
            lacking.add("tool_arguments")
        acting = [t for t in tools if not t.error and not is_transfer(t.name)]  # a transfer returns nothing
        if acting and all(t.result is None for t in acting):
            lacking.add("tool_results")
    if not steps and tools:
        lacking.add("llm_calls")
    if run.facts.calls and is_error(run.root):
        lacking.add("llm_calls")  # calls known only from records of successful calls: the failed one left none
    if steps and all(s.facts.overwritten for s in steps):
        lacking |= {"llm_calls", "tool_calls"}  # only the last call's record, over the earlier ones'
    if unnamed:
        lacking.add("tool_calls")
    if any(s.facts.generation for s in steps):
        lacking |= {"llm_calls", "messages"}  # a span for several calls, their exchanges not on it
    for span in unread:
        lacking |= would_hold(span)
    return [part for part in PARTS if part in lacking]


def _exchanges_unrecorded(found: Run, steps: list[Step], messages: list[Any], tools: list[ToolCall]) -> set[Part]:
    """What the model calls leave off the trace while other content is on it. Calls that record what they were
    sent and never what came back (an instrumentation that writes only the input messages): the answer and the
    conversation's end. A conversation of no text at all, pieced together from the calls the model asked for
    (content off, while the requested calls are still written): the conversation, and the tools' results when no
    call shows one (a failure's status says it failed, not what the model was told), their arguments when no call
    shows any, and the answer when no span recorded one (the last response's text is not on the trace either)."""
    run = found.facts
    if not steps or run.messages:
        return set()
    if any(m.get("tool_calls") for m in messages) and not any(m.get("content") for m in messages):
        unrecorded: set[Part] = {"messages"} if run.output or is_error(found.root) else {"messages", "output"}
        if all(t.arguments in (None, {}, "", "{}") for t in tools):
            unrecorded.add("tool_arguments")  # the calls' names and ids, written without what they were given
        return unrecorded | {"tool_results"} if all(t.result is None for t in tools) else unrecorded
    if not run.output and any(s.facts.input_messages for s in steps):
        if any(s.facts.output_messages for s in steps):
            return set()
        return {"messages"} if is_error(found.root) else {"output", "messages"}  # a failed run gave no answer
    return set()


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
    found = {s: c.facts for s in region if (c := classified.get(s)) and isinstance(c.facts, LLMFacts)}
    agents = {s for s in region if (c := classified.get(s)) and isinstance(c.facts, RunFacts)}
    called = innermost_calls(tree, found, agents)
    for wrapper in found.keys() - called.keys():
        notes[wrapper] = _RECORD_NOTE if found[wrapper].overwritten else _WRAPPER_NOTE
    for sid in called.keys() & tree.holding(found.keys(), stop=agents):
        notes[sid] = "records a failed call, which left no span of its own: a call after those beneath it"
    inner = [(tree.spans[sid], f) for sid, (f, _) in called.items()]
    content = any(f.input_messages or f.output_messages for _, f in inner)
    calls = []
    for span, f in inner:
        if content and not _exchanged(span, f):
            notes[span.span_id] = "an LLM span with no messages, usage, response or failure: it made no model call"
        else:
            calls.append((span, f))
    calls += recorded
    # Node.js timestamps are whole milliseconds: a growing history breaks ties between calls.
    calls.sort(key=lambda sf: (called_at(*sf), len(sf[1].input_messages), sf[0].end_ns, tree.order[sf[0].span_id]))
    recorded_ids = {id(f) for _, f in recorded}
    return [
        Step(
            i,
            span,
            facts,
            requested_calls(facts.output_messages),
            failed=id(facts) not in recorded_ids and called[span.span_id][1],
        )
        for i, (span, facts) in enumerate(calls, start=1)
    ]


_WRAPPER_NOTE = "wraps the model call of a span below it: one LLM call, counted there"
_RECORD_NOTE = "wraps the calls made under it, recording the last one over the earlier ones': counted at its span"


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


def _asked_now(step: Step) -> list[RequestedCall]:
    """The calls a step's response asked for, less those its own input already holds as an earlier response's,
    answered, beside an answer of its own (a span that keeps an agent's first response's calls and its last one's
    text): a step left with none answered."""
    facts = step.facts
    if not step.calls or not msg.assistant_text(facts.output_messages):
        return step.calls
    earlier = {c.call_id for c in requested_calls(facts.input_messages)} & msg.tool_results(facts.input_messages).keys()
    return [c for c in step.calls if c.call_id not in earlier]


def _failed_in_their_step(tree: Tree, tools: list[ToolCall], steps: list[Step]) -> None:
    """Calls a model asked for that left no execution and no result, where the step holding that model call failed
    after it with no later model call of its own (an agent's step that raised while running them): they failed."""
    asked = [t for t in tools if t.witnesses == ["request"] and not t.error and t.result is None]
    if not asked:
        return
    by_index = {s.index: s for s in steps}
    for tool in asked:
        step = by_index.get(tool.step)
        holder = tree.spans.get(tree.parent.get(step.span.span_id) or "") if step is not None else None
        if step is None or holder is None or _status(holder)[0] == "ok":
            continue
        later = [s for s in steps if s.index > step.index and tree.parent.get(s.span.span_id) == holder.span_id]
        if not later and holder.end_ns >= step.span.end_ns:
            tool.error = True


def _status(span: Span) -> tuple[Literal["ok", "error"], str | None]:
    exceptions = [e for e in span.events if e.name == "exception"]
    if not failed(span) and (span.status_code == STATUS_OK or not exceptions or is_error(span)):
        return "ok", None
    return "error", _failure(span) or "error"


def _failure(span: Span) -> str | None:
    """What the span says of a failure: its status message, else its exceptions', else its `error.*`
    attributes (a callback's record of a failed call, on a span whose status stayed OK)."""
    if span.status_message:
        return span.status_message
    for event in span.events:
        if event.name == "exception":
            kind, message = event.attributes.get("exception.type"), event.attributes.get("exception.message")
            described = ": ".join(str(p) for p in (kind, message) if p)
            if described:
                return described
    return text(span.attributes.get("error.message")) or text(span.attributes.get("error.type"))


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
