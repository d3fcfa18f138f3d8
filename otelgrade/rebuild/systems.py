"""Requests from structure: the spans that mark an agent system, whatever its operation is called.

A request's root is the outermost span above its agents that carries an instrumentation's marks (a GenAI
operation of any name, an OpenInference span kind, any attribute a dialect recognizes its spans by): a
multi-agent system span no dialect reads (`invoke_workflow`, a team's or swarm's own operation) still holds
one request. An application's own span, with no such mark, never is one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TypeVar

from otelgrade.core.spans import Span
from otelgrade.rebuild.dialects import candidates
from otelgrade.rebuild.tree import Tree
from otelgrade.rebuild.unread import MARKS

_Member = TypeVar("_Member")


def instrumented(span: Span) -> bool:
    """Whether an instrumentation wrote the span: it carries a convention's marks."""
    return bool(candidates(span)) or not span.attributes.keys().isdisjoint(MARKS)


def join_under_systems(
    tree: Tree,
    read: Collection[str],
    groups: Mapping[str, Sequence[_Member]],
    agents: Collection[str],
    names: Mapping[str, frozenset[str]],
    entries: Mapping[str, tuple[str, str | None, str | None]],
    invocations: Collection[str] = (),
) -> dict[str, list[_Member]]:
    """Requests of different agents under one outermost system span that is no agent's own run are one request,
    rooted there: the agents a multi-agent system span invokes as its children, linked by no transfer the trace
    shows. `read` are the spans a dialect read as an agent or a chain; any other span that carries an
    instrumentation's marks, or below the trace's root was written by the instrumentation scope of one of those
    (a framework's workflow span with attributes of its own), is a system span too; the root is the
    application's, whatever tracer wrote it. `names` are each request's agent names and `entries` the agent each
    starts with, what it was asked and what the request answered: an agent invoked again under the same span with
    another message (or with none on the trace to tell) is another request, a second message to it; asked the
    same again (a group chat's moderator, its instruction after the chat so far), or given the previous request's
    answer (a pipeline of two modules of one kind), it is a turn of the first. Within one agent's own
    invocation (`invocations`: a workflow agent that runs its agents in a loop) its agents' turns are one request
    however they repeat."""
    if len(groups) < 2:
        return {key: list(members) for key, members in groups.items()}
    frameworks = {scope for s in read if (scope := tree.spans[s].scope)}
    outermost: dict[str, str] = {}
    invoked_in: dict[str, str] = {}  # the outermost agent invocation above a request's root
    for key in groups:
        top = None
        for above in tree.ancestors(key):
            span = tree.spans[above]
            by_scope = span.scope in frameworks and tree.parent.get(above) is not None
            if above not in agents and (above in read or by_scope or instrumented(span)):
                top = above
            if above not in agents and above in invocations:
                invoked_in[key] = above
        if top is not None:
            outermost[key] = top
    under: dict[str, list[str]] = {}
    for key, top in outermost.items():
        under.setdefault(top, []).append(key)
    in_one: dict[str, list[str]] = {}
    for key, wrapper in invoked_in.items():
        in_one.setdefault(wrapper, []).append(key)
    joined: dict[str, list[_Member]] = {}
    for key, members in groups.items():
        wrapping = invoked_in.get(key)
        # one agent's invocation runs several agents, each maybe in turns (one agent again and again under it is
        # asked again: requests of their own)
        if wrapping is not None and len({n for k in in_one[wrapping] for n in names[k]}) > 1:
            joined.setdefault(wrapping, []).extend(members)
            continue
        top = outermost.get(key)
        keys = under.get(top, []) if top is not None else []
        systemic = len(keys) > 1 and not _asked_again(keys, entries)
        joined.setdefault(top if systemic and top is not None else key, []).extend(members)
    return joined


def by_application_span(tree: Tree, calls: Sequence[str]) -> list[list[str]] | None:
    """Model calls (in order) grouped by the application span nearest above each, when there are several such
    spans, none inside another: each is one invocation of the application's loop, a run of its own even when the
    calls carry no content to tell the runs apart by. None when the calls share one."""
    owner: dict[str, str] = {}
    for sid in calls:
        above = next((a for a in tree.ancestors(sid) if not instrumented(tree.spans[a])), None)
        if above is None:
            return None
        owner[sid] = above
    spans = set(owner.values())
    if len(spans) < 2 or any(a in spans for s in spans for a in tree.ancestors(s)):
        return None
    groups: dict[str, list[str]] = {}
    for sid in calls:
        groups.setdefault(owner[sid], []).append(sid)
    return list(groups.values())


def _asked_again(keys: Sequence[str], entries: Mapping[str, tuple[str, str | None, str | None]]) -> bool:
    """Whether one of the requests (in order) starts with an agent an earlier one started with, asked something
    else than it was and than the previous request answered, or with nothing on the trace to compare."""
    asked: dict[str, str | None] = {}
    answered: str | None = None
    for key in keys:
        agent, said, answer = entries[key]
        carried = bool(said and answered and answered in said)
        if agent in asked and (said is None or said != asked[agent]) and not carried:
            return True
        asked.setdefault(agent, said)
        answered = answer
    return False
