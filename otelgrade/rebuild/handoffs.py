"""Which tool calls of a request of several agents are control transfers, decided by what the trace shows.

In order, the first rule that applies decides (and the handoff says which, `decided_by`):
1. `dialect`: a span states the transfer (a handoff span, a graph's `goto`) inside the call's execution, or, with
   no execution, right after the response that asked for it.
2. `nested_invocation` / `agent_acted`: an agent's invocation runs inside the call (nested in its execution span,
   or within the caller's run while the call lasts; an invocation that holds no span, beside one that did the
   work, is a layer of it: a runner's span its work was not nested in). The call is a delegation when an
   argument names whom it hands to; else it is that agent called as a tool, a tool call, unless a framework's
   name for its transfers says otherwise (`name_hint`).
3. `agent_acted`: the next model call of the request is another agent's (past the caller's own calls that only
   wind its turn down, asking for no tool), made after the call ended, and the call names that agent (an
   argument value, a tool name that ends with its name, its tool's description, or its result: `transferred to
   X`), or, the request's tools being traced, was the last its response asked for and left no execution or one
   that returned nothing (`None`: the framework answered it in place of a tool), and is neither an agent called
   as a tool nor a failure. Any other call that names no agent is a tool call whoever speaks next (a group
   chat's turn that ends on a tool's result).
4. `name_hint`: a framework's name for its transfers (`transfers.is_transfer`), where nothing above applied.
Several calls of one response that rule 3 would pick leave a tie: a name hint breaks it, else the last one.

A transfer can also leave no call at all on the trace (`unseen_transfers`): with content off, a response that
ended for tool calls, no execution of its call, and another agent acting next, where the instrumentation traces
the executions of the request's other calls or the other agent's invocation runs inside the caller's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import pairwise

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import Handoff, LLMCall, ToolCall, Trajectory
from otelgrade.rebuild.dialects import Classified
from otelgrade.rebuild.facts import ToolFacts, TransferFacts
from otelgrade.rebuild.messages import assistant_text
from otelgrade.rebuild.outputs import placeholder
from otelgrade.rebuild.span_readers import announces_tools
from otelgrade.rebuild.transfers import is_the_agent, is_transfer, named_agent, names, target_argument, told
from otelgrade.rebuild.tree import Tree

DIALECT = "dialect"
NESTED = "nested_invocation"
ACTED = "agent_acted"
NAME_HINT = "name_hint"


def stated(classified: Mapping[str, Classified], region: Collection[str]) -> dict[str, TransferFacts]:
    """The spans of a region whose dialect states a control transfer: a transfer's own span, or a tool's execution
    that says whom it hands to."""
    out = {}
    for s in region:
        facts = getattr(classified.get(s), "facts", None)
        if isinstance(facts, TransferFacts):
            out[s] = facts
        elif isinstance(facts, ToolFacts) and facts.hands_to:
            out[s] = TransferFacts(to_agent=facts.hands_to, from_agent=facts.handed_from)
    return out


def descriptions(classified: Mapping[str, Classified], region: Collection[str]) -> dict[str, str]:
    """What the tools executed in a region say they do (`Ask agent 'billing' for help`), by execution span: a call
    whose tool's description names the agent that acts right after it names that agent (rule 3), when content
    capture leaves no argument or result to."""
    out = {}
    for s in region:
        facts = getattr(classified.get(s), "facts", None)
        if isinstance(facts, ToolFacts) and facts.description:
            out[s] = facts.description
    return out


def decide(
    tree: Tree,
    calls: Sequence[ToolCall],
    llm_calls: Sequence[LLMCall],
    statements: Mapping[str, TransferFacts],
    invocations: Sequence[tuple[Span, str | None, str | None]],
    agent_spans: Collection[str] = (),
    described: Mapping[str, str] | None = None,
) -> tuple[dict[int, Handoff], set[int], list[Handoff], list[tuple[Span, str | None, str]]]:
    """The calls (by index) that are control transfers, each as a handoff, those of them that are delegations
    (the agent they hand to ran within the call, and the caller carries on after), the further handoffs of a
    call that delegated to several agents at once, and the agents invoked within a step of their caller's with no
    call of the caller's to stand for them (root, agent, caller: an agent called from the caller's code).
    `invocations` are the request's agent runs: root span, agent name, and the root of the run that encloses it;
    `agent_spans` the spans that are agents' invocations (any other span under a run is one of its steps: a chain,
    a graph node, a model call); `described` what the executed tools say they do, by execution span
    (`descriptions`)."""
    described = described or {}
    out: dict[int, Handoff] = {}
    more: list[Handoff] = []  # the other agents a call delegated to at once
    uncalled: list[tuple[Span, str | None, str]] = []  # agents called from a caller's code: no call on the trace
    delegations: set[int] = set()
    settled: set[int] = set()  # agents called as tools: decided, not transfers
    agents = {name for _, name, _ in invocations if name} | {c.agent for c in llm_calls if c.agent}
    start_of = {c.step: _start(tree, c) for c in llm_calls}
    agent_at = {c.step: c.agent for c in llm_calls}
    failed_steps = {c.step for c in llm_calls if c.error}
    executed = {c.span_id: i for i, c in enumerate(calls) if c.span_id}
    within = tree.nearest(executed.keys()) if executed and (statements or invocations) else {}

    # 1. what a dialect states
    for sid, facts in statements.items():
        i = _carrier(tree, sid, facts, calls, executed, within, start_of)
        if i is not None and i not in out:
            out[i] = _handoff(calls[i], facts.to_agent, DIALECT, facts.from_agent)

    # 2. an agent's invocation inside the call
    nested_in = within
    agent_of_run = {root.span_id: name for root, name, _ in invocations if name}  # an agent may run several times
    ran_in: dict[int, list[tuple[str | None, str]]] = {}  # call -> the agents whose invocation ran inside it
    idle_in: dict[int, list[tuple[str | None, str]]] = {}  # and those whose invocation holds no span: a layer
    for root, name, enclosing in invocations:
        i = executed.get(root.span_id)
        how = NESTED
        if i is None and root.span_id in nested_in:
            i = executed[nested_in[root.span_id]]
        if i is None:
            i, how = (
                _called_within(tree, root, name, enclosing, calls, agent_of_run, start_of, agent_at, agent_spans),
                ACTED,
            )
        if i is not None and i not in out:
            (ran_in if tree.children.get(root.span_id) else idle_in).setdefault(i, []).append((name, how))
        elif i is None and enclosing in agent_of_run and _under_a_step(tree, root.span_id, enclosing, agent_spans):
            uncalled.append((root, name, agent_of_run[enclosing]))
    for i, idle in idle_in.items():  # an empty invocation beside one that did the work wraps it (a runner's span
        ran_in.setdefault(i, idle)  # its work is not nested in): not another agent run inside the call
    # a call whose execution span closed before its work ran (a generator's span): the agents whose invocations
    # start in the caller's run after it, before the caller's next model call, ran in it when there are several
    for i, ran in _ran_after(tree, calls, invocations, agent_of_run, start_of, agent_at).items():
        if i not in out and i not in ran_in and len({n for n, _ in ran}) > 1:
            ran_in[i] = ran
    for i, ran in ran_in.items():
        call = calls[i]
        name, how = ran[0]
        whom = target_argument(call.arguments)
        if len({n for n, _ in ran}) > 1:  # several agents ran inside one call: a delegation to each (a team's
            out[i] = _handoff(call, name, how)  # broadcast), no agent called as a tool, which is one agent
            more.extend(_handoff(call, n, h) for n, h in ran[1:])
            delegations.add(i)
        elif whom is not None or (name and names("", call.arguments, name)):
            out[i] = _handoff(call, name or whom, how)
            delegations.add(i)
        elif is_transfer(call.name):  # the evidence fits an agent called as a tool as well: the name decides
            out[i] = _handoff(call, name or named_agent(call.name, call.arguments), NAME_HINT)
            delegations.add(i)
        else:
            settled.add(i)

    # 3. the agent acts right after the call
    picked: dict[int, list[tuple[int, str]]] = {}
    tools_traced = any(c.span_id for c in calls)
    for i, call in enumerate(calls):
        if i in out or i in settled or call.error or is_the_agent(call.name, agents):
            continue
        after = _next_other(call, calls, agent_at, failed_steps)
        taker = agent_at.get(after) if after is not None else None
        if taker is None or taker == call.agent or call.agent is None:
            continue
        said = described.get(call.span_id or "")
        named = [a for a in agents if a != call.agent and (names(call.name, call.arguments, a) or told(said, a))]
        void = (call.span_id is None and call.result is None) or (call.result is not None and placeholder(call.result))
        intercepted = tools_traced and void and _last_of_its_response(i, calls)
        if (named and taker not in named) or (not named and not told(call.result, taker) and not intercepted):
            continue  # names another agent, or none: nor does its result say the taker took over, nor did the
            # framework answer it in place of an execution, the tools being traced
        if call.span_id and tree.spans[call.span_id].end_ns > start_of.get(after or 0, 0):
            continue  # the other agent acted while the call ran, not after it
        picked.setdefault(call.step, []).append((i, taker))
    for chosen in picked.values():
        i, taker = ([c for c in chosen if is_transfer(calls[c[0]].name)] or chosen)[-1]
        out[i] = _handoff(calls[i], taker, ACTED)

    # 3, with no model call on the trace to say who acts next: the next agent's invocation to start after the call
    if not llm_calls and invocations:
        for i, handoff in _followed_by_named(tree, calls, invocations, described).items():
            if i not in out and i not in settled:
                out[i] = handoff

    # 4. a framework's name for a transfer, with nothing above to say otherwise
    for i, call in enumerate(calls):
        if i not in out and i not in settled and is_transfer(call.name):
            taker = named_agent(call.name, call.arguments) or next(
                (a for s, a in sorted(agent_at.items()) if s > call.step and a != call.agent), None
            )
            out[i] = _handoff(call, taker, NAME_HINT)
    return out, delegations, more, uncalled


def stated_alone(
    tree: Tree,
    calls: Sequence[ToolCall],
    llm_calls: Sequence[LLMCall],
    statements: Mapping[str, TransferFacts],
    found: Collection[Handoff],
) -> list[Handoff]:
    """The handoffs a span states that no call of the request carries (the response that asked for the transfer
    is not on the trace: a model span that records no output): from the agent the span names, else the one whose
    model call came last before it; to the agent it names, else the next other agent to make a model call. One
    that a call already carries (`found`: the same agents, the same step) is that call's."""
    if not statements:
        return []
    start_of = {c.step: _start(tree, c) for c in llm_calls}
    executed = {c.span_id: i for i, c in enumerate(calls) if c.span_id}
    within = tree.nearest(executed.keys()) if executed else {}
    out = []
    for sid, facts in statements.items():
        if _carrier(tree, sid, facts, calls, executed, within, start_of) is not None:
            continue
        start = tree.spans[sid].start_ns
        before = [c for c in llm_calls if start_of[c.step] <= start]
        giver = facts.from_agent or (before[-1].agent if before else None)
        taker = facts.to_agent or next(
            (c.agent for c in llm_calls if start_of[c.step] > start and c.agent and c.agent != giver), None
        )
        step = before[-1].step if before else 0
        if (
            giver
            and taker
            and giver != taker
            and not any((h.from_agent, h.to_agent, h.step) == (giver, taker, step) for h in found)
        ):
            out.append(Handoff(from_agent=giver, to_agent=taker, step=step, span_id=sid, decided_by=DIALECT))
    return out


def _carrier(
    tree: Tree,
    statement: str,
    facts: TransferFacts,
    calls: Sequence[ToolCall],
    executed: Mapping[str, int],
    within: Mapping[str, str],
    start_of: Mapping[int, int],
) -> int | None:
    """The call a statement is about: the execution it is or sits in, else one asked for just before it."""
    i = executed.get(statement)
    i = executed.get(within.get(statement, "")) if i is None else i
    return _asked_before(tree.spans[statement], calls, start_of, facts.to_agent) if i is None else i


def unseen_transfers(
    llm_calls: Sequence[LLMCall],
    calls: Sequence[ToolCall],
    handoffs: Sequence[Handoff],
    nested: Collection[tuple[str | None, str | None]] = (),
) -> list[Handoff]:
    """Transfers no call shows: a model response that ended for tool calls (its finish reason), of which no call,
    execution or handoff is seen, followed by another agent's model call with none of its own agent's between.
    Only where the request's other calls were seen executed (`agent_acted`): its tools are traced, so a call that
    left no execution was the framework's own, the transfer (a plain tool would have left one); or where the other
    agent's invocation runs inside the caller's (`nested`: caller, callee), so that invocation carried the call out
    (`nested_invocation`: a delegation, with content off)."""
    traced = any("execution" in c.witnesses for c in calls)
    if not traced and not nested:
        return []
    seen = {c.step for c in calls} | {h.step for h in handoffs}
    out = []
    for call, following in pairwise(llm_calls):
        inside = (call.agent, following.agent) in nested
        if (
            (traced or inside)
            and call.step not in seen
            and call.agent is not None
            and following.agent not in (None, call.agent)
            and call.finish_reason is not None
            and announces_tools(call.finish_reason)
            and not any(m.get("tool_calls") for m in call.output_messages)
        ):
            how = NESTED if inside else ACTED
            out.append(Handoff(from_agent=call.agent, to_agent=following.agent, step=call.step, decided_by=how))
    return out


def chosen_speakers(llm_calls: Sequence[LLMCall], handoffs: Sequence[Handoff]) -> list[Handoff]:
    """Speakers a third agent chose (a group chat's moderator or selector): an agent that speaks again and again
    between the others, never asking for a tool, each time answering with the name of the agent that speaks
    next. The turn passing from one speaker to the next it named is a handoff (`agent_acted`); its first choice,
    with no speaker before it, is the request's start, not a transfer."""
    turns = _turns(llm_calls)
    if len(turns) < 4:
        return []
    stretches: dict[str | None, int] = {}
    for agent, _ in turns:
        stretches[agent] = stretches.get(agent, 0) + 1
    asks = {c.agent for c in llm_calls if any(m.get("tool_calls") for m in c.output_messages)}
    seen = {h.step for h in handoffs if h.step}
    unplaced = [(h.from_agent, h.to_agent) for h in handoffs if not h.step]  # the runs show them, no step places
    out: list[Handoff] = []
    speaker: str | None = None
    for (agent, group), (after, following) in pairwise(turns):
        said = assistant_text([m for c in group for m in c.output_messages])
        if agent not in asks and stretches[agent] > 1 and after not in (None, agent) and told(said, after):
            step = following[0].step
            if (speaker, after) in unplaced:  # the same turn passing, seen from the runs
                unplaced.remove((speaker, after))
            elif speaker not in (None, after) and not any(group[0].step <= s <= step for s in seen):
                out.append(Handoff(from_agent=speaker, to_agent=after, step=step, decided_by=ACTED))
            continue
        speaker = agent
    return out


def _turns(llm_calls: Sequence[LLMCall]) -> list[tuple[str | None, list[LLMCall]]]:
    """The model calls in stretches of one agent each, in order: (agent, its calls)."""
    out: list[tuple[str | None, list[LLMCall]]] = []
    for call in llm_calls:
        if out and out[-1][0] == call.agent:
            out[-1][1].append(call)
        else:
            out.append((call.agent, [call]))
    return out


def _followed_by_named(
    tree: Tree,
    calls: Sequence[ToolCall],
    invocations: Sequence[tuple[Span, str | None, str | None]],
    described: Mapping[str, str],
) -> dict[int, Handoff]:
    """Rule 3 where the trace shows agents and tools but no model call (spans only): an executed call that names
    (by its name, an argument or its tool's description) the agent whose invocation is the next to start after
    the call ended, another agent than the caller's, with no call of the caller's executed in between."""
    caller_of = tree.nearest({root.span_id for root, _, _ in invocations})
    name_of = {root.span_id: name for root, name, _ in invocations}
    order = sorted((root.start_ns, name) for root, name, _ in invocations if name)
    out = {}
    for i, call in enumerate(calls):
        span = tree.spans.get(call.span_id or "")
        if span is None or call.error:
            continue
        caller = name_of.get(caller_of.get(span.span_id, ""))
        taker = next(((start, name) for start, name in order if start >= span.end_ns), None)
        if caller is None or taker is None or taker[1] == caller:
            continue
        start, name = taker
        later = [c for c in calls[i + 1 :] if c.span_id in tree.spans and tree.spans[c.span_id].start_ns < start]
        if any(name_of.get(caller_of.get(c.span_id or "", "")) == caller for c in later):
            continue
        if names(call.name, call.arguments, name) or told(described.get(span.span_id), name):
            out[i] = Handoff(from_agent=caller, to_agent=name, step=call.step, span_id=span.span_id, decided_by=ACTED)
    return out


def _last_of_its_response(i: int, calls: Sequence[ToolCall]) -> bool:
    """Whether the call at `i` is the last its response asked for (calls are in the order they were asked)."""
    return i + 1 == len(calls) or calls[i + 1].step != calls[i].step


def _next_other(
    call: ToolCall, calls: Sequence[ToolCall], agent_at: Mapping[int, str | None], failed: Collection[int] = ()
) -> int | None:
    """The step of the next model call after a call's that is another agent's: the next one, or a later one when
    the caller's own calls in between only wound its turn down (no tool call: it handed over, then said so). A call
    of the caller's that failed wound nothing down: the caller carried on after the call (its result the failed
    request would have shown)."""
    for step in sorted(s for s in agent_at if s > call.step):
        if agent_at[step] != call.agent or step in failed or any(c.step == step for c in calls):
            return step
    return None


def _handoff(call: ToolCall, to: str | None, how: str, giver: str | None = None) -> Handoff:
    """The handoff a call makes: from the agent a span says asked for it, else the one that made it."""
    return Handoff(from_agent=giver or call.agent, to_agent=to, step=call.step, span_id=call.span_id, decided_by=how)


def _start(tree: Tree, call: LLMCall) -> int:
    span = tree.spans.get(call.span_id or "")
    return span.start_ns if span is not None else 0


def _asked_before(
    statement: Span, calls: Sequence[ToolCall], start_of: Mapping[int, int], to: str | None
) -> int | None:
    """The call a statement outside any execution carries out: one the last response before it asked for with no
    execution of its own, the one naming the agent it states first."""
    steps = [s for s, start in start_of.items() if start <= statement.start_ns]
    if not steps:
        return None
    step = max(steps)
    asked = [i for i, c in enumerate(calls) if c.step == step and c.span_id is None]
    named = [i for i in asked if to and names(calls[i].name, calls[i].arguments, to)]
    chosen = named or asked
    return chosen[-1] if chosen else None


def _ran_after(
    tree: Tree,
    calls: Sequence[ToolCall],
    invocations: Sequence[tuple[Span, str | None, str | None]],
    agent_of_run: Mapping[str, str],
    start_of: Mapping[int, int],
    agent_at: Mapping[int, str | None],
) -> dict[int, list[tuple[str | None, str]]]:
    """The agents whose invocation, in their caller's run, started after one of its calls' execution ended and
    before the caller's next model call, by that call (the last its response asked for)."""
    out: dict[int, list[tuple[str | None, str]]] = {}
    for root, name, enclosing in invocations:
        caller = agent_of_run.get(enclosing or "")
        if caller is None:
            continue
        before = [(c.step, i) for i, c in enumerate(calls) if c.agent == caller and c.span_id in tree.spans]
        before = [(step, i) for step, i in before if tree.spans[calls[i].span_id or ""].end_ns <= root.start_ns]
        if not before:
            continue
        step, i = max(before)
        if not _last_of_its_response(i, calls):
            continue
        later = [s for s, start in start_of.items() if s > step and start < root.start_ns]
        if not any(agent_at.get(s) == caller for s in later):
            out.setdefault(i, []).append((name, ACTED))
    return out


def _called_within(
    tree: Tree,
    root: Span,
    run_name: str | None,
    enclosing: str | None,
    calls: Sequence[ToolCall],
    agent_of_run: Mapping[str, str],
    start_of: Mapping[int, int],
    agent_at: Mapping[int, str | None],
    agent_spans: Collection[str],
) -> int | None:
    """The call during which a run nested in its caller's run started: the caller's last call asked for before
    it, the caller making no model call in between, when the run started while the call's execution lasted, or
    under one of the caller's steps (an agent called as a tool whose invocation is no tool span's child), or the
    call left no execution and an argument's value is the run's agent (the run is its execution)."""
    if enclosing is None:
        return None
    caller = agent_of_run.get(enclosing)
    if caller is None:
        return None
    before = [
        (c.step, i) for i, c in enumerate(calls) if c.agent == caller and start_of.get(c.step, 0) <= root.start_ns
    ]
    if not before:
        return None
    step, i = max(before)
    span = tree.spans.get(calls[i].span_id or "")
    during = span is not None and span.start_ns <= root.start_ns <= span.end_ns
    # with no execution seen, a call whose argument names the agent that then starts is carried out by that start
    stands_for = span is None and bool(run_name) and names("", calls[i].arguments, run_name or "")
    if not during and not stands_for and not _under_a_step(tree, root.span_id, enclosing, agent_spans):
        return None  # started beside the caller's steps, after the call's execution: a node of the caller's graph
    later = [s for s, start in start_of.items() if s > step and start < root.start_ns]
    return None if any(agent_at.get(s) == caller for s in later) else i


def _under_a_step(tree: Tree, span_id: str, enclosing: str, agent_spans: Collection[str]) -> bool:
    """Whether a span sits under one of its enclosing run's steps (a span that is no agent's invocation), not
    directly under the run or under agent spans only (a node of a graph the run is)."""
    for above in tree.ancestors(span_id):
        if above == enclosing:
            return False
        if above not in agent_spans:
            return True
    return False


def speakers_by_transfers(run: Trajectory) -> None:
    """The agent of each model call of a request whose trace names none (every call is the request's, or no
    one's), from the transfers a span states (a graph's `goto`): calls up to the first transfer are its giver's,
    those after each transfer its taker's, where the transfers chain (each from the agent the last one went to)."""
    stated_ = sorted((h for h in run.handoffs if h.decided_by == DIALECT), key=lambda h: h.step)
    own = {None, run.agent_name}
    if not stated_ or not all(c.agent in own for c in run.llm_calls) or not stated_[0].from_agent:
        return
    if any(a.to_agent != b.from_agent for a, b in pairwise(stated_)) or any(h.from_agent in own for h in stated_):
        return
    for call in run.llm_calls:
        call.agent = next((h.from_agent for h in stated_ if call.step <= h.step), stated_[-1].to_agent)
    at = {c.step: c.agent for c in run.llm_calls}
    for tool in run.tool_calls:
        tool.agent = at.get(tool.step, tool.agent)
    run.agents = list(dict.fromkeys(a for c in run.llm_calls if (a := c.agent)))
