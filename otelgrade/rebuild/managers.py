"""A team's manager: the selector, planner or orchestrator that runs a multi-agent chat with model calls of its
own, made for the request under no agent's invocation. Its calls are the request's (the manager's), never a
request of their own; the speakers of its team are one request; the user's task is what the team was sent, and
where the manager speaks last (an orchestrator's final answer), its answer is what the user got.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from otelgrade.core.trajectory import PARTS, Handoff, Trajectory
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialects.autogen import manager_calls, team_task
from otelgrade.rebuild.facts import RunFacts
from otelgrade.rebuild.handoffs import ACTED
from otelgrade.rebuild.runs import Run
from otelgrade.rebuild.tree import Tree


def managers(tree: Tree, runs: Sequence[Run]) -> dict[str, list[Run]]:
    """Each team's manager's model calls, by team id, as runs that are no agent's (one per span recording them),
    the first saying what the team was asked. Empty where no run is a team's turn."""
    teams = {r.facts.team for r in runs if r.facts.team}
    if not teams:
        return {}
    out: dict[str, list[Run]] = {}
    for team, recorded in manager_calls(tree, teams).items():
        asked = team_task(tree.spans[recorded[0][0]])
        out[team] = [
            Run(tree.spans[sid], [sid], RunFacts(agent_name=kind, calls=calls, input=asked if i == 0 else None), False)
            for i, (sid, kind, calls) in enumerate(recorded)
        ]
    return out


def join_teams(groups: Mapping[str, list[Run]], managed: Mapping[str, list[Run]]) -> dict[str, list[Run]]:
    """Requests whose agents are speakers of one managed team are one request (its manager chose each speaker),
    keyed by the first of them."""
    if not managed:
        return dict(groups)
    first: dict[str, str] = {}
    joined: dict[str, list[Run]] = {}
    for key, members in groups.items():
        team = next((m.facts.team for m in members if m.facts.team in managed), None)
        into = first.setdefault(team, key) if team is not None else key
        joined.setdefault(into, []).extend(members)
    return joined


def manager_of(members: Sequence[Run], managed: Mapping[str, list[Run]]) -> list[Run]:
    """The manager runs of the team a request's agents speak in, if one made model calls."""
    team = next((m.facts.team for m in members if m.facts.team in managed), None)
    return managed[team] if team is not None else []


def managed_request(request: Trajectory, manager: Sequence[Run], members: Sequence[tuple[Run, Trajectory]]) -> None:
    """What the user asked of the team, and the manager's closing answer where it spoke last (not asking for a
    tool): the request's input and output. Each turn the manager gave to another speaker is a handoff from the
    one before; a speaker that failed after the manager's last recorded call (records are of successful calls
    only) ended the request in failure, with its failed call lacking."""
    asked = manager[0].facts.input
    if asked:
        request.input = asked
        request.lacks = [p for p in request.lacks if p != "input"]
    names = {m.facts.agent_name for m in manager}
    last = request.llm_calls[-1] if request.llm_calls else None
    if request.status == "ok" and last is not None and last.agent in names:
        said = msg.assistant_text(last.output_messages)
        if said and not any(m.get("tool_calls") for m in last.output_messages):
            request.output = said
    turns = sorted(members, key=lambda m: m[0].root.start_ns)
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
    if own.status == "error" and not own.llm_calls and all(m.root.start_ns <= final.root.start_ns for m in manager):
        request.status, request.error, request.output = "error", own.error, None
        request.lacks = [p for p in PARTS if p == "llm_calls" or p in request.lacks]
