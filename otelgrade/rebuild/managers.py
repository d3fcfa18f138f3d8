"""A team's manager: the selector, planner or orchestrator that runs a multi-agent chat with model calls of its
own, made for the request under no agent's invocation. Its calls are the request's (the manager's), never a
request of their own; the speakers of its team are one request; the user's task is what the team was sent, and
where the manager speaks last (an orchestrator's final answer), its answer is what the user got.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from otelgrade.core.trajectory import PARTS, Handoff, Trajectory
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialects.autogen import manager_calls, team_of, team_task
from otelgrade.rebuild.facts import RunFacts
from otelgrade.rebuild.handoffs import ACTED
from otelgrade.rebuild.runs import Run
from otelgrade.rebuild.tree import Tree


@dataclass(slots=True)
class Manager:
    """A team's or workflow's manager: its model calls (as runs: its own invocations, or spans recording its calls)
    and what the user asked the team, where the trace says."""

    runs: list[Run]
    task: str | None


def managers(
    tree: Tree, runs: Sequence[Run], built: Mapping[str, Trajectory], loose: Collection[str] = ()
) -> dict[str, Manager]:
    """The managers of the trace's teams and workflows, by what they manage: a team's id (the model calls made in
    its runtime actors outside every agent's invocation: records, or `loose` calls in no agent's run), or the
    workflow span whose steps consult an agent of their own (`consulted`)."""
    out: dict[str, Manager] = {}
    teams = {r.facts.team for r in runs if r.facts.team}  # a team its agents' spans state
    if loose:  # calls in no agent's run: the teams of the agents' runtime actors, whose manager may have made them
        teams.update(t for r in runs if (t := team_of(tree, r.root.span_id, r.facts.team)))
    agents = {r.root.span_id for r in runs}
    for team, recorded in manager_calls(tree, teams, loose, agents).items() if teams else ():
        out[team] = Manager(
            [
                Run(tree.spans[sid], [sid], RunFacts(agent_name=kind, calls=calls), False)
                for sid, kind, calls in recorded
            ],
            team_task(tree.spans[recorded[0][0]]),
        )
    for workflow, consulted in _consulted(tree, runs, built).items() if len(runs) > 2 else ():
        first = built[consulted[0].root.span_id].llm_calls
        said = [m.get("content") for m in first[0].input_messages if m.get("role") == "user"] if first else []
        out[workflow] = Manager(consulted, said[0] if said and isinstance(said[0], str) else None)
    return out


def _consulted(tree: Tree, runs: Sequence[Run], built: Mapping[str, Trajectory]) -> dict[str, list[Run]]:
    """Agents a workflow consults within its own steps, by the workflow's span: an agent invoked again and again
    inside one step (several invocations under one span that is no agent's, beside no other agent's), while other
    steps of the same workflow run other agents, is the workflow's manager (a planner, a progress ledger), each of
    its invocations a model call made for the request, never a request of its own."""
    roots = {r.root.span_id for r in runs}
    steps: dict[str, list[Run]] = {}
    for run in runs:
        parent = tree.parent.get(run.root.span_id)
        if parent is not None and parent not in roots and not run.tool_root:
            steps.setdefault(parent, []).append(run)
    name = {r.root.span_id: built[r.root.span_id].agent_name for r in runs}
    agents = {step: {name[r.root.span_id] for r in held} for step, held in steps.items()}
    consulting = {
        tree.parent.get(step): next(iter(agents[step]))
        for step, held in steps.items()
        if len(held) > 1 and len(agents[step]) == 1 and None not in agents[step]
    }
    out: dict[str, list[Run]] = {}
    spoke: set[str] = set()  # workflows with steps of other agents
    for step, held in steps.items():
        workflow = tree.parent.get(step)
        if workflow is None or workflow not in consulting:
            continue
        if agents[step] == {consulting[workflow]}:
            out.setdefault(workflow, []).extend(held)
        else:
            spoke.add(workflow)
    return {w: sorted(held, key=lambda r: r.root.start_ns) for w, held in out.items() if w in spoke}


def _anchor(tree: Tree, members: Sequence[Run], managed: Mapping[str, Manager]) -> str | None:
    """What managed a request's agents: their team, else the workflow above them, where it has a manager."""
    for member in members:
        if (team := team_of(tree, member.root.span_id, member.facts.team)) in managed:
            return team
    return next((a for m in members for a in tree.ancestors(m.root.span_id) if a in managed), None)


def join_teams(tree: Tree, groups: Mapping[str, list[Run]], managed: Mapping[str, Manager]) -> dict[str, list[Run]]:
    """Requests whose agents are speakers of one managed team or workflow are one request (its manager chose each
    speaker), rooted at the workflow's span, else keyed by the first of them (a team on a runtime has no span of
    its own)."""
    if not managed:
        return dict(groups)
    first: dict[str, str] = {}
    joined: dict[str, list[Run]] = {}
    for key, members in groups.items():
        anchor = _anchor(tree, members, managed)
        into = key if anchor is None else anchor if anchor in tree.spans else first.setdefault(anchor, key)
        joined.setdefault(into, []).extend(members)
    return joined


def manager_of(tree: Tree, members: Sequence[Run], managed: Mapping[str, Manager]) -> Manager | None:
    """The manager of the team or workflow a request's agents speak in, if one made model calls."""
    anchor = _anchor(tree, members, managed) if managed else None
    return managed[anchor] if anchor is not None else None


def managed_request(request: Trajectory, manager: Manager, members: Sequence[tuple[Run, Trajectory]]) -> None:
    """The request's agent is the first speaker; its input what the user asked of the team, its output the
    manager's closing answer where it spoke last (not asking for a tool). Each turn the manager gave to another
    speaker is a handoff from the one before; a speaker that failed after the manager's last recorded call
    (records are of successful calls only) ended the request in failure, with its failed call lacking."""
    asked = manager.task
    if asked:
        request.input = asked
        request.lacks = [p for p in request.lacks if p != "input"]
    names = {m.facts.agent_name for m in manager.runs}
    last = request.llm_calls[-1] if request.llm_calls else None
    if request.status == "ok" and last is not None and last.agent in names:
        said = msg.assistant_text(last.output_messages)
        if said and not any(m.get("tool_calls") for m in last.output_messages):
            request.output = said
    turns = sorted(members, key=lambda m: m[0].root.start_ns)
    request.agent_name = turns[0][1].agent_name or request.agent_name  # the first speaker it chose
    shown = [(h.from_agent, h.to_agent) for h in request.handoffs]
    for (_, before), (run, after) in pairwise(turns):
        if before.agent_name == after.agent_name:
            continue
        if (before.agent_name, after.agent_name) in shown:
            shown.remove((before.agent_name, after.agent_name))
        else:
            request.handoffs.append(
                Handoff(
                    from_agent=before.agent_name, to_agent=after.agent_name, span_id=run.root.span_id, decided_by=ACTED
                )
            )
    final, own = turns[-1]
    if (
        own.status == "error"
        and not own.llm_calls
        and all(m.root.start_ns <= final.root.start_ns for m in manager.runs)
    ):
        request.status, request.error, request.output = "error", own.error, None
        request.lacks = [p for p in PARTS if p == "llm_calls" or p in request.lacks]
