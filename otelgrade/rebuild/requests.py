"""Group each agent's own runs into the requests users made: the run graders see by default.

A request's root is the outermost agent-system span above its agents (a runner or workflow span, a crew
kickoff, a supervisor graph, any instrumented span whose children are different agents: `systems`), else its
entry agent's span; agents nested in one another, or handing work to one another, belong to the same request.
A request of one agent is that agent's run. A request of several holds every agent's model and tool calls in
order, each saying whose it is; its control transfers (decided by what the trace shows: `handoffs`) are
`handoffs`, not tool calls; and each agent's own run is reported too, nested under the request
(`parent_span_id`), as that agent's model saw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import PARTS, Handoff, LLMCall, ToolCall, Trajectory
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialects import Classified
from otelgrade.rebuild.dialects.autogen import runtime_actor
from otelgrade.rebuild.facts import ChainFacts, LLMFacts, RunFacts, TransferFacts
from otelgrade.rebuild.handoffs import (
    ACTED,
    DIALECT,
    chosen_speakers,
    decide,
    descriptions,
    speakers_by_transfers,
    stated,
    stated_alone,
    unseen_transfers,
)
from otelgrade.rebuild.instructions import handoffs_by_instructions
from otelgrade.rebuild.managers import Manager, join_teams, managed_request, manager_of, managers
from otelgrade.rebuild.runs import Notes, Run, build
from otelgrade.rebuild.systems import instrumented, join_under_systems
from otelgrade.rebuild.transfers import is_transfer, named_agent, names, told
from otelgrade.rebuild.tree import Tree


def requests(
    tree: Tree,
    classified: dict[str, Classified],
    runs: Sequence[Run],
    built: dict[str, Trajectory],
    regions: dict[str, list[str]],
    notes: Notes,
) -> list[Trajectory]:
    """Every run of the trace: one per request, and each agent's own run nested in a request of several."""
    out = [
        _graph_of_agents(tree, classified, r, regions[r.root.span_id], notes)
        or _agents_by_instructions(tree, classified, built[r.root.span_id], regions[r.root.span_id])
        for r in runs
        if not r.agent
    ]
    agent_runs = [r for r in runs if r.agent]
    in_runs = {s for r in runs for s in regions[r.root.span_id]}
    loose = {sid for sid, c in classified.items() if isinstance(c.facts, LLMFacts) and sid not in in_runs}
    managed = managers(tree, agent_runs, built, loose)  # a manager's own model calls: a team's, a workflow's
    if len(agent_runs) == 1 and not loose and not managed:  # the common trace: one agent, every call in its run
        only = agent_runs[0].root.span_id
        return [*out, _alone(tree, classified, built[only], regions[only])]
    if managed:  # the speakers make the requests; their manager's calls are the requests' own
        managing = {r.root.span_id for m in managed.values() for r in m.runs}
        runs = [r for r in runs if r.root.span_id not in managing]
        agent_runs = [r for r in agent_runs if r.root.span_id not in managing]
    handed = _link(tree, runs, built, descriptions(classified, classified.keys()))
    system = {sid for sid, c in classified.items() if isinstance(c.facts, RunFacts | ChainFacts)}
    groups = _join_under_workflow_agent(tree, system, _group(tree, system, agent_runs, built), loose)
    names = {k: frozenset(built[m.root.span_id].agent_name or "" for m in ms) for k, ms in groups.items()}
    invoked = {sid for sid, c in classified.items() if isinstance(c.facts, RunFacts)}
    entries = {
        k: (
            built[ms[0].root.span_id].agent_name or "",
            built[ms[0].root.span_id].input,
            built[ms[-1].root.span_id].output,
        )
        for k, ms in groups.items()
    }
    groups = join_under_systems(tree, system, groups, {r.root.span_id for r in runs}, names, entries, invoked)
    for root, members in join_teams(tree, groups, managed).items():
        manager = manager_of(tree, members, managed)
        if len(members) == 1 and not manager and (root == members[0].root.span_id or loose.isdisjoint(tree.walk(root))):
            only = members[0].root.span_id
            out.append(_alone(tree, classified, built[only], regions[only]))
            continue
        request, transferred = _request(tree, classified, root, members, built, regions, handed, notes, manager)
        out.append(request)
        for run in members:
            own = built[run.root.span_id]
            if own.span_id != request.span_id:
                if own.parent_span_id is None or run.root.span_id in handed:
                    own.parent_span_id = request.span_id
                _transfers_executed(own, transferred)
                out.append(own)
        for consulted in manager.runs if manager else ():
            if consulted.root.span_id in built:  # the manager's own invocations, nested
                built[consulted.root.span_id].parent_span_id = request.span_id
                out.append(built[consulted.root.span_id])
    return out


def _transfers_executed(run: Trajectory, transferred: list[ToolCall]) -> None:
    """An agent's calls that its request found to be transfers were carried out: another agent took over."""
    spans = {c.span_id for c in transferred if c.span_id}
    ids = {c.call_id for c in transferred if c.call_id}
    for call in run.tool_calls:
        if (call.span_id in spans or call.call_id in ids) and "execution" not in call.witnesses:
            call.witnesses = [*call.witnesses, "execution"]


def _alone(tree: Tree, classified: dict[str, Classified], run: Trajectory, region: list[str]) -> Trajectory:
    """A request of one agent span: its own run, whose transfers (to agents the trace does not show apart: stated
    by a span, or named so by a framework, or its model given another agent's instructions) are handoffs."""
    # a run with no model call on the trace (a system's record of what it ran) may state whom it handed to
    statements = stated(classified, region) if run.tool_calls or not run.llm_calls else {}
    if not statements and not any(is_transfer(c.name) for c in run.tool_calls):
        # most runs of one agent: nothing to decide, unless its model speaks as other agents in turn
        return _agents_by_instructions(tree, classified, run, region) if len(run.llm_calls) > 1 else run
    decided, *_ = decide(tree, run.tool_calls, run.llm_calls, statements, ())
    run.tool_calls, transfers, _ = _split(run.tool_calls, decided)
    if not run.llm_calls and statements:  # a system's record of whom it handed to, with no call to carry it
        transfers += _handed_without_calls(tree, run, statements, transfers)
    for transfer in transfers:
        transfer.from_agent = transfer.from_agent or run.agent_name
    run.handoffs = transfers
    speakers_by_transfers(run)
    return run


def _handed_without_calls(
    tree: Tree, run: Trajectory, statements: Mapping[str, TransferFacts], found: list[Handoff]
) -> list[Handoff]:
    """The handoffs a run with no model call on the trace states (an agent network's record of the agents its
    router ran): from the run's agent. Whatever chose them (a router's model) is not on the trace: the run lacks
    its model calls."""
    giving = {sid: f if f.from_agent else TransferFacts(f.to_agent, run.agent_name) for sid, f in statements.items()}
    handed = stated_alone(tree, run.tool_calls, run.llm_calls, giving, found)
    if handed and "llm_calls" not in run.lacks:
        run.lacks = [p for p in PARTS if p in run.lacks or p == "llm_calls"]
    return handed


def _group(tree: Tree, system: set[str], runs: list[Run], built: dict[str, Trajectory]) -> dict[str, list[Run]]:
    """Agent runs joined by nesting or handoff, keyed by their request's root: the outermost agent-system span
    above them that holds no other request's runs, else the topmost of them."""
    index = {r.root.span_id: i for i, r in enumerate(runs)}
    leader = list(range(len(runs)))

    def find(i: int) -> int:
        while leader[i] != i:
            leader[i] = leader[leader[i]]
            i = leader[i]
        return i

    for run in runs:
        parent = built[run.root.span_id].parent_span_id
        if parent in index:
            leader[find(index[run.root.span_id])] = find(index[parent])
    component = {sid: find(i) for sid, i in index.items()}
    owner = tree.owners(component)
    members: dict[int, list[Run]] = {}
    for run in sorted(runs, key=lambda r: tree.order.get(r.root.span_id, -1)):
        members.setdefault(component[run.root.span_id], []).append(run)
    groups: dict[str, list[Run]] = {}
    for c, group in members.items():
        node = top = group[0].root.span_id
        root = None
        while True:
            if node in system:
                root = node
            parent = tree.parent.get(node)
            if parent is None or owner.get(parent) != c:
                break
            node = parent
        groups[root or top] = group
    return groups


def _join_under_workflow_agent(
    tree: Tree, system: set[str], groups: dict[str, list[Run]], loose_calls: set[str]
) -> dict[str, list[Run]]:
    """Requests under one outermost agent-system span that also holds model calls of no agent's run (a
    supervisor graph whose own agent has no span) are one request: that agent's, rooted at the span."""
    if not loose_calls:
        return groups
    outermost: dict[str, str] = {}
    for sid in tree.order:  # parents first
        parent = tree.parent[sid]
        above = outermost.get(parent) if parent is not None else None
        if above is not None or sid in system:
            outermost[sid] = above or sid
    holding = {outermost[c] for c in loose_calls if c in outermost}
    joined: dict[str, list[Run]] = {}
    for key, members in groups.items():
        top = outermost.get(key, key)
        joined.setdefault(top if top in holding else key, []).extend(members)
    return joined


def _request(
    tree: Tree,
    classified: dict[str, Classified],
    root: str,
    members: list[Run],
    built: dict[str, Trajectory],
    regions: dict[str, list[str]],
    handed: dict[str, tuple[str, str]],
    notes: Notes,
    manager: Manager | None = None,
) -> tuple[Trajectory, list[ToolCall]]:
    """The request run of several agents' runs: every call under `root`, each call naming its agent, and its team's
    manager's own calls (`managers`)."""
    head = next((r for r in members if r.root.span_id == root), None)
    first = min(members, key=lambda r: (r.root.start_ns, tree.order.get(r.root.span_id, -1)))
    spans = {s for r in members for s in regions[r.root.span_id]}
    if head is None and root in tree.spans:
        spans.update(tree.walk(root))
        wrapper = classified.get(root)
        facts = wrapper.facts if wrapper is not None and isinstance(wrapper.facts, RunFacts) else RunFacts()
        run = Run(
            tree.spans[root], [root], RunFacts(agent_name=facts.agent_name, input=facts.input, output=facts.output)
        )
    else:
        run = head or first
    agent_of = {}
    for member in members:
        name = built[member.root.span_id].agent_name or ""
        agent_of[member.root.span_id] = name  # calls the run span records
        for s in regions[member.root.span_id]:
            if isinstance(getattr(classified.get(s), "facts", None), LLMFacts):
                agent_of[s] = name
    # the manager's records of calls, the spans of its calls, or its own invocations' calls
    for recording in manager.runs if manager else ():
        agent_of[recording.root.span_id] = recording.facts.agent_name or ""
        for s in regions.get(recording.root.span_id) or ([] if recording.facts.calls else recording.tops):
            spans.add(s)
            if isinstance(getattr(classified.get(s), "facts", None), LLMFacts):
                agent_of[s] = recording.facts.agent_name or ""
    region = sorted(spans, key=lambda s: tree.order.get(s, -1))
    own = run.facts.agent_name or run.root.name
    nodes = {}  # model calls outside every agent's run are the agent its graph's node is (a swarm's agents),
    if head is None:  # else the workflow's own agent's (a supervisor graph)
        for s in region:
            if s not in agent_of and isinstance(getattr(classified.get(s), "facts", None), LLMFacts):
                agent_of[s] = nodes[s] = _graph_node(tree, classified, s, root) or own
    request = build(tree, classified, run, region, notes, agent_of, [*members, *(manager.runs if manager else ())])
    entry = built[first.root.span_id]
    first_agent = request.llm_calls[0].agent if request.llm_calls else None
    if head is not None:
        request.agent_name = built[run.root.span_id].agent_name
    else:  # a graph whose nodes are its agents is the request's agent
        request.agent_name = own if len(set(nodes.values()) - {own}) > 1 else first_agent or entry.agent_name
    request.own_run = head is not None
    # an agent called as a tool was asked by the request's own agent, not by the user
    called = request.input if first.tool_root else None
    request.input = _asked_of_all(run.facts.input or called or entry.input or request.input, request.llm_calls)
    asked_entry = request.input is not None and request.input == entry.input and "input" not in entry.lacks
    if asked_entry and "input" in request.lacks:
        request.lacks = [p for p in request.lacks if p != "input"]  # what its entry agent was asked, on its span
    enclosing = tree.nearest({m.root.span_id for m in members})
    invocations = [(m.root, built[m.root.span_id].agent_name, enclosing.get(m.root.span_id)) for m in members]
    agent_spans = {s for s in region if isinstance(getattr(classified.get(s), "facts", None), RunFacts)}
    statements = stated(classified, region)
    decided, delegations, broadcast, uncalled = decide(
        tree,
        request.tool_calls,
        request.llm_calls,
        statements,
        invocations,
        agent_spans,
        descriptions(classified, region),
    )
    alone = stated_alone(tree, request.tool_calls, request.llm_calls, statements, decided.values())
    if uncalled:
        request.tool_calls = _called_from_code(tree, request, uncalled, built)
    request.tool_calls, transfers, transferred = _split(request.tool_calls, decided)
    transfers = sorted([*transfers, *alone, *broadcast], key=lambda h: h.step)
    _failed_by_last_agent(request, [built[m.root.span_id] for m in members])
    _lacks_what_members_lack(request, [built[m.root.span_id] for m in members])
    delegated = [*(decided[i] for i in delegations), *broadcast]
    nested = _nested_pairs(tree, members, built)
    request.handoffs = _handoffs(tree, request, transfers, delegated, members, built, handed, nested)
    speakers_by_transfers(request)
    if unseen := unseen_transfers(request.llm_calls, request.tool_calls, request.handoffs, nested):
        request.handoffs = sorted([*request.handoffs, *unseen], key=lambda h: h.step)
    if chosen := chosen_speakers(request.llm_calls, request.handoffs):
        request.handoffs = sorted([*request.handoffs, *chosen], key=lambda h: h.step)
    ended = sorted(members, key=lambda r: (r.root.end_ns, tree.order.get(r.root.span_id, -1)), reverse=True)
    last = next((m for m in ended if built[m.root.span_id].output), None)  # the last agent that answered
    head_spoke_last = head is not None and bool(request.llm_calls) and request.llm_calls[-1].agent == request.agent_name
    if (
        request.status == "ok"
        and last is not None
        and (request.output is None or (run.root.end_ns <= last.root.start_ns and not head_spoke_last))
    ):
        request.output = built[last.root.span_id].output  # after the head's turn, or where the head said nothing
    own_answer = run.facts.output is not None and all(m is not run for m in members)  # a system span's record
    if request.status == "ok" and last is not None and not own_answer and _in_parallel(tree, last, members):
        request.output = None  # agents that answered side by side: their answers were joined off the trace
        request.lacks = sorted({*request.lacks, "output"})
    _answers_of_agents_as_tools(request, members, built)
    if manager:
        managed_request(request, manager, [(m, built[m.root.span_id]) for m in members])
    return request, transferred


def _in_parallel(tree: Tree, last: Run, members: Sequence[Run]) -> bool:
    """Whether the last agent to answer ran side by side with another of the request's (their invocations
    overlap, neither inside the other): a fan-out, whose answer is what joined theirs, not the last one's."""
    above = set(tree.ancestors(last.root.span_id))
    return any(
        m is not last
        and m.root.start_ns < last.root.end_ns
        and last.root.start_ns < m.root.end_ns
        and m.root.span_id not in above
        and last.root.span_id not in tree.ancestors(m.root.span_id)
        for m in members
    )


def _answers_of_agents_as_tools(request: Trajectory, members: list[Run], built: dict[str, Trajectory]) -> None:
    """An agent called as a tool returned its answer: the call's result where its execution records none."""
    answers = {m.root.span_id: built[m.root.span_id].output for m in members if m.tool_root}
    for call in request.tool_calls:
        if call.result is None and not call.error and answers.get(call.span_id or ""):
            call.result = answers[call.span_id or ""]


def _graph_of_agents(
    tree: Tree, classified: dict[str, Classified], run: Run, region: list[str], notes: Notes
) -> Trajectory | None:
    """A run no agent span marks (a graph's chain) whose model calls run in two or more nodes of its graph: a
    graph whose nodes are its agents, each call its node's, its transfers handoffs."""
    root = run.root.span_id
    agent_of = {}
    for s in region:
        if isinstance(getattr(classified.get(s), "facts", None), LLMFacts):
            node = _graph_node(tree, classified, s, root)
            if node is None:
                return None
            agent_of[s] = node
    if len(set(agent_of.values())) < 2:
        return None
    request = build(tree, classified, run, region, notes, agent_of)
    decided, *_ = decide(
        tree,
        request.tool_calls,
        request.llm_calls,
        stated(classified, region),
        (),
        (),
        descriptions(classified, region),
    )
    request.tool_calls, transfers, _ = _split(request.tool_calls, decided)
    returns = _returns(transfers, transfers, request)  # a supervisor's worker node hands back when it is done
    request.handoffs = _in_order(transfers, returns)
    return request


def _agents_by_instructions(
    tree: Tree, classified: dict[str, Classified], run: Trajectory, region: list[str]
) -> Trajectory:
    """A run no agent span marks whose model is given other instructions after a call that names the next agent:
    each call after it is that agent's, the call a handoff; the first agent is the one the run's earliest step
    says acts, where one says."""
    said = [
        (tree.spans[s].start_ns, f.speaker)
        for s in region
        if isinstance(f := getattr(classified.get(s), "facts", None), ChainFacts) and f.speaker
    ]
    first = min(said)[1] if said else None
    decided, agent_at = handoffs_by_instructions(run.llm_calls, run.tool_calls, ACTED, first)
    if decided:
        for call in run.llm_calls:
            call.agent = agent_at.get(call.step)
        for tool in run.tool_calls:
            tool.agent = agent_at.get(tool.step)
        run.tool_calls, run.handoffs, _ = _split(run.tool_calls, decided)
        run.agents = list(dict.fromkeys(agent_at.values()))
    return run


def _graph_node(tree: Tree, classified: dict[str, Classified], span_id: str, root: str) -> str | None:
    """The node of the request's graph a span runs in: the outermost graph node above it, below the request's
    root (a swarm's agents are its graph's nodes, each a graph of its own whose nodes are steps)."""
    node = None
    for above in tree.ancestors(span_id):
        if above == root:
            return node
        facts = getattr(classified.get(above), "facts", None)
        if isinstance(facts, ChainFacts) and facts.node:
            node = facts.node
    return None


def _failed_by_last_agent(request: Trajectory, members: list[Trajectory]) -> None:
    """A request whose last acting agent failed failed, whatever the span above it says (a system span left unset
    while only the failing worker's span is an error): that agent made the request's last model call, and its run
    is the last to end (or, where the trace shows no model call, its run is the last to end)."""
    if request.status != "ok" or not (request.llm_calls or "llm_calls" in request.lacks):
        return
    last = max(members, key=lambda m: (m.end_time or "", len(m.llm_calls)))
    acted_last = request.llm_calls[-1].agent == last.agent_name if request.llm_calls else True
    if last.status == "error" and acted_last:
        request.status, request.error, request.output = "error", last.error, None


def _lacks_what_members_lack(request: Trajectory, members: list[Trajectory]) -> None:
    """Model calls an agent's run cannot show are missing from its request too (a failed worker whose framework
    records only its successful model calls). Members' other gaps may concern their transfers, which the
    request reads as handoffs, so they are not carried over."""
    if "llm_calls" not in request.lacks and any("llm_calls" in m.lacks for m in members):
        request.lacks = [p for p in PARTS if p == "llm_calls" or p in request.lacks]


def _handoffs(
    tree: Tree,
    request: Trajectory,
    transfers: list[Handoff],
    delegated: list[Handoff],
    members: list[Run],
    built: dict[str, Trajectory],
    handed: dict[str, tuple[str, str]],
    nested: set[tuple[str | None, str | None]],
) -> list[Handoff]:
    """The request's control transfers in order: its transfer calls, control handed back without one (not by a
    worker that ran inside the transfer call, as a delegation does, nor by one that failed), and handoffs only
    the agents' runs show (an agent that names whom it took over from)."""
    within = tree.nearest({t.span_id for t in transfers if t.span_id})
    ran_inside = {within[m.root.span_id] for m in members if m.root.span_id in within}
    ran_inside |= {m.root.span_id for m in members if m.tool_root}
    failed = {built[m.root.span_id].agent_name for m in members if built[m.root.span_id].status == "error"}
    candidates = [
        t
        for t in transfers
        if t.span_id not in ran_inside
        and t.to_agent not in failed
        and all(t is not d for d in delegated)
        and (t.span_id is not None or (t.from_agent, t.to_agent) not in nested)
    ]
    out = _in_order(transfers, _returns(candidates, transfers, request))
    members_ids = {m.root.span_id for m in members}
    for receiver, (giver, how) in handed.items():
        to, by = built[receiver].agent_name, built[giver].agent_name
        if (
            how
            and receiver in members_ids
            and to != by
            and not any(h.to_agent == to and h.from_agent == by for h in out)
        ):
            out.append(Handoff(from_agent=by, to_agent=to, span_id=receiver, decided_by=how))
    return out


def _in_order(transfers: list[Handoff], returns: list[Handoff]) -> list[Handoff]:
    """Transfers and hand-backs by step, a hand-back first where both fall on one step (it came back, then went)."""
    ordered = sorted([*((h.step, 1, h) for h in transfers), *((h.step, 0, h) for h in returns)], key=lambda x: x[:2])
    return [h for _, _, h in ordered]


def _nested_pairs(tree: Tree, members: list[Run], built: dict[str, Trajectory]) -> set[tuple[str | None, str | None]]:
    """(caller, callee) for each agent whose invocation runs inside another agent's. A transfer call that left no
    execution of its own, its callee's invocation running inside the caller's, was carried out by that invocation:
    control comes back to the caller when it ends, with no handoff of its own (a delegation). A transfer whose
    execution is seen ended before its callee started (a graph node of the caller's): it may be handed back."""
    enclosing = tree.nearest({m.root.span_id for m in members})
    return {
        (built[outer].agent_name, built[m.root.span_id].agent_name)
        for m in members
        if (outer := enclosing.get(m.root.span_id)) is not None and outer in built
    }


def _returns(candidates: list[Handoff], transfers: list[Handoff], request: Trajectory) -> list[Handoff]:
    """Control handed back with no transfer call of its own: after a transfer from X to Y, X's next model call
    after Y's first when every call in between was Y's or its team's, the agents Y (or they) transferred to (a
    supervisor's worker hands back when it is done; a team's lead hands back once its workers handed back to it),
    and no transfer in between handed back to X."""
    agents = [(c.step, c.agent) for c in request.llm_calls]
    returns = []
    for transfer in candidates:
        giver, taker = transfer.from_agent, transfer.to_agent
        between = [(step, agent) for step, agent in agents if step > transfer.step]
        took = next((step for step, agent in between if agent == taker), None)  # the giver may wind down first
        if took is None or giver == taker:
            continue
        team, back = {taker}, None
        for step, agent in between:
            team |= {t.to_agent for t in transfers if t.from_agent in team and transfer.step < t.step < step}
            if step > took and agent not in team:
                back = step
                break
        if back is None or dict(between)[back] != giver:
            continue
        if not any(t.to_agent == giver and transfer.step < t.step <= back for t in transfers):
            returns.append(Handoff(from_agent=taker, to_agent=giver, step=back, decided_by=ACTED))
    return returns


def _called_from_code(
    tree: Tree, request: Trajectory, uncalled: Sequence[tuple[Span, str | None, str]], built: dict[str, Trajectory]
) -> list[ToolCall]:
    """The request's tool calls with the agents its agents called from their own code (a code agent's managed
    agent: its invocation under the caller's step, no call asked for on the trace), each an agent called as a tool
    at the caller's last step before it: what it was asked is not on the trace as a call's arguments, what it
    answered is."""
    added = []
    for root, name, caller in uncalled:
        steps = [
            c.step
            for c in request.llm_calls
            if c.agent == caller and c.span_id in tree.spans and tree.spans[c.span_id or ""].start_ns <= root.start_ns
        ]
        if not name or not steps:
            continue
        own = built[root.span_id]
        added.append(
            ToolCall(
                name=name,
                result=own.output,
                error=own.status == "error",
                step=max(steps),
                span_id=root.span_id,
                duration_s=own.duration_s,
                agent=caller,
                witnesses=["execution"],
            )
        )
    order = {c.span_id: tree.order.get(c.span_id or "", -1) for c in [*request.tool_calls, *added]}
    return sorted([*request.tool_calls, *added], key=lambda c: (c.step, order.get(c.span_id, -1)))


def _split(calls: list[ToolCall], decided: dict[int, Handoff]) -> tuple[list[ToolCall], list[Handoff], list[ToolCall]]:
    """The tool calls without the control transfers, those transfers as handoffs, and as the calls they were."""
    kept = [c for i, c in enumerate(calls) if i not in decided]
    return kept, [decided[i] for i in sorted(decided)], [calls[i] for i in sorted(decided)]


def _link(
    tree: Tree, runs: Sequence[Run], built: dict[str, Trajectory], described: Mapping[str, str]
) -> dict[str, tuple[str, str]]:
    """Set each run's `parent_span_id`: the enclosing run, else the run it took over from (a handoff, whose
    request the new run inherits). Returns the handoffs found: receiving run's span id -> (handing run's, what
    decided it: the receiving agent's span naming its giver, or the giver handing over as it ended). `described`
    are the executed tools' descriptions, by execution span."""
    enclosing = tree.nearest(built.keys())
    by_name: dict[str, Run] = {}
    for run in sorted(runs, key=lambda r: r.root.start_ns, reverse=True):
        name = built[run.root.span_id].agent_name
        if name:
            by_name[name] = run  # the earliest run of each agent
    transferring = sorted((r for r in runs if _hands_over(built[r.root.span_id])), key=lambda r: r.root.start_ns)
    top = sorted((r for r in runs if r.root.span_id not in enclosing), key=lambda r: r.root.start_ns)
    handed: dict[str, tuple[str, str]] = {}
    teams: dict[str, tuple[str, str | None]] | None = None
    for run in runs:
        trajectory = built[run.root.span_id]
        parent = enclosing.get(run.root.span_id)
        if parent is not None:
            trajectory.parent_span_id = parent
            continue
        giver, how = by_name.get(run.facts.handed_off_from or ""), DIALECT
        if giver is None or giver is run or giver.root.start_ns > run.root.start_ns:
            how = ACTED
            givers = [r for r in transferring if r is not run and _transferred(tree, r, run, built, top)]
            givers += _unseen_givers(runs, built, run, described)
            # the run whose last call names this agent, else the last to end before it: a chain of transfers
            giver = max(givers, key=lambda r: (_names_next(built, r, run), r.root.end_ns), default=None)
            if giver is not None and not (
                _names_next(built, giver, run) or is_transfer(built[giver.root.span_id].tool_calls[-1].name)
            ):
                how = ""  # one request, but no call of it says control passed: a turn of a group chat
            if giver is None:  # one message a runtime published to several agents at once: they work side by side
                teams = teams if teams is not None else _teams(tree, runs)
                giver = _heard_together(teams, top, run)
                how = "" if giver is not None else how
            if giver is None:  # the turn passed with no call: the next agent carries on the same conversation
                giver = next((r for r in reversed(top) if r is not run and _carries_on(tree, built, r, run)), None)
                if giver is not None:  # one request: the floor of a team's chat passed, or a pipeline's next step
                    teams = teams if teams is not None else _teams(tree, runs)
                    how = ACTED if _published(teams, giver, run) else ""
            if giver is None:  # nor can a conversation say it, the model's turns not on the trace
                teams = teams if teams is not None else _teams(tree, runs)
                giver = next((r for r in reversed(top) if r is not run and _turn_of_team(built, teams, r, run)), None)
                if giver is not None and not _published(teams, giver, run):
                    how = ""  # one request: a pipeline's next step, sent to it alone, is no transfer
        if giver is not None:
            handing = built[giver.root.span_id]
            trajectory.parent_span_id = giver.root.span_id
            trajectory.input = handing.input or trajectory.input
            _handoff_result(handing, trajectory)
            handed[run.root.span_id] = (giver.root.span_id, how)
    return handed


def _unseen_givers(
    runs: Sequence[Run], built: dict[str, Trajectory], later: Run, described: Mapping[str, str]
) -> list[Run]:
    """Runs whose model calls the trace does not show (spans of agents and tools only) that handed over to a
    later run: it started after they ended, and their last tool call names its agent (by the tool's name, an
    argument, or the tool's description). Without the model's turns nothing else tells a transfer from a tool."""
    name = built[later.root.span_id].agent_name
    out = []
    for run in runs:
        own = built[run.root.span_id]
        if run is later or own.llm_calls or "llm_calls" not in own.lacks or not own.tool_calls:
            continue
        last = own.tool_calls[-1]
        named = _names_next(built, run, later) or told(described.get(last.span_id or ""), name)
        if named and run.root.end_ns <= later.root.start_ns and own.agent_name != name:
            out.append(run)
    return out


def _carries_on(tree: Tree, built: dict[str, Trajectory], earlier: Run, later: Run) -> bool:
    """Whether a later agent's run carries on an earlier one's work, as the next step of a pipeline or the next
    speaker of a group chat does: another agent, started after the earlier run ended, under no instrumented span
    they share (a system span joins its agents itself), whose first model call was given the earlier run's
    answer, as a message or within one (a flow's next crew, its task written around the answer)."""
    before, after = built[earlier.root.span_id], built[later.root.span_id]
    if earlier.root.end_ns > later.root.start_ns or before.agent_name == after.agent_name or not after.llm_calls:
        return False
    shared = set(tree.ancestors(earlier.root.span_id)).intersection(tree.ancestors(later.root.span_id))
    if any(instrumented(tree.spans[s]) for s in shared if s in tree.spans):
        return False
    said = {m.get("content") for m in after.llm_calls[0].input_messages if isinstance(m.get("content"), str)}
    return bool(before.output) and any(before.output in s for s in said if s)


def _heard_together(teams: Mapping[str, tuple[str, str | None]], top: Sequence[Run], run: Run) -> Run | None:
    """The earlier run that handled the same message a runtime published as this one (a concurrent team's
    members, each given the request at once), if any."""
    heard = teams.get(run.root.span_id, ("", None))[1]
    if heard is None:
        return None
    return next(
        (
            r
            for r in top
            if r is not run
            and r.root.start_ns <= run.root.start_ns
            and teams.get(r.root.span_id, ("", None))[1] == heard
        ),
        None,
    )


def _teams(tree: Tree, runs: Sequence[Run]) -> dict[str, tuple[str, str | None]]:
    """Each run's team, where the trace names one, and the message its turn handles where that message was
    published to the team's chat (else it was sent to it alone, a pipeline's step): the team its span states
    (`RunFacts.team`), else its runtime actor's."""
    out: dict[str, tuple[str, str | None]] = {}
    for run in runs:
        actor = runtime_actor(tree, run.root.span_id)
        if run.facts.team is not None:
            # a team its span names, no actor span to say how: its turns passed the floor, each its own message
            out[run.root.span_id] = (run.facts.team, actor[1] if actor else run.root.span_id)
        elif actor is not None:
            out[run.root.span_id] = actor
    return out


def _published(teams: Mapping[str, tuple[str, str | None]], earlier: Run, later: Run) -> bool:
    """Whether a later run's turn was published to the chat of the team an earlier run is in: the floor passed."""
    team = teams.get(later.root.span_id)
    return team is not None and team[1] is not None and teams.get(earlier.root.span_id, ("", None))[0] == team[0]


def _turn_of_team(
    built: dict[str, Trajectory], teams: Mapping[str, tuple[str, str | None]], earlier: Run, later: Run
) -> bool:
    """Whether a later agent's run is the next turn of the same team as an earlier one's, where the trace shows no
    conversation to tell it by (no model call, or none with its messages): both runs are one team's, and it
    started after the other ended."""
    before, after = built[earlier.root.span_id], built[later.root.span_id]
    team = teams.get(earlier.root.span_id)
    return (
        team is not None
        and team[0] == teams.get(later.root.span_id, ("", None))[0]
        and earlier.root.end_ns <= later.root.start_ns
        and before.agent_name != after.agent_name
        and not any(c.input_messages for c in (*before.llm_calls, *after.llm_calls))
        and not {"llm_calls", "messages"}.isdisjoint((*before.lacks, *after.lacks))
    )


def _hands_over(trajectory: Trajectory) -> bool:
    """A run that ended by a tool call its model never saw the result of (it handed over), or by a framework's
    transfer (a name hint)."""
    if not trajectory.tool_calls:
        return False
    last = trajectory.tool_calls[-1]
    if is_transfer(last.name):
        return True
    return trajectory.status == "ok" and not last.error and last.step == len(trajectory.llm_calls) > 0


def _names_next(built: dict[str, Trajectory], earlier: Run, later: Run) -> bool:
    """Whether the last call of a run that handed over names the agent of a later run (by its name, arguments or
    result)."""
    call = built[earlier.root.span_id].tool_calls[-1]
    later_name = built[later.root.span_id].agent_name or ""
    return bool(later_name) and (
        names(call.name, call.arguments, later_name)
        or named_agent(call.name, call.arguments) == later_name
        or told(call.result, later_name)
    )


def _handoff_result(handing: Trajectory, receiving: Trajectory) -> None:
    """The handoff call's result, when its own run does not show it: what the receiving agent's first model
    call was told for that call id."""
    if not handing.tool_calls or not receiving.llm_calls:
        return
    call = handing.tool_calls[-1]
    if call.result is None and not call.error and call.call_id:
        told = msg.tool_results(receiving.llm_calls[0].input_messages)
        call.result = told.get(call.call_id)


def _transferred(tree: Tree, earlier: Run, later: Run, built: dict[str, Trajectory], top: list[Run]) -> bool:
    """A run that ended by handing over handed to a run of another agent that started after it: the one its last
    call names (`transfer_to_agent` with the agent's name as an argument), else its sibling, else the next run to
    start after it ended."""
    if earlier.root.end_ns > later.root.start_ns:
        return False
    call = built[earlier.root.span_id].tool_calls[-1]
    later_name, earlier_name = built[later.root.span_id].agent_name, built[earlier.root.span_id].agent_name
    if _names_next(built, earlier, later):
        return True
    if tree.parent.get(earlier.root.span_id) == tree.parent.get(later.root.span_id) is not None:
        return True
    following = next((r for r in top if r.root.start_ns >= earlier.root.end_ns), None)
    return following is later and later_name != earlier_name and named_agent(call.name, call.arguments) is None


def _asked_of_all(asked: str | None, llm_calls: Sequence[LLMCall]) -> str | None:
    """What the user asked of a request of several agents: the entry agent's last user message, unless no other
    agent was given it and an earlier one of the entry's was (a moderator's own instruction, `Decide what to do
    next`, appended after the user's message that every speaker is given)."""
    firsts: dict[str | None, LLMCall] = {}
    for call in llm_calls:
        firsts.setdefault(call.agent, call)
    if asked is None or len(firsts) < 2:
        return asked
    entry, *others = firsts.values()
    given = {m.get("content") for o in others for m in o.input_messages if m.get("role") == "user"}
    if asked in given:
        return asked
    own = [m.get("content") for m in entry.input_messages if m.get("role") == "user"]
    return next((t for t in reversed(own) if isinstance(t, str) and t in given), asked)
