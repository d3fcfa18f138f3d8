"""Runs of a trace that holds model calls and no agent span (a provider SDK's instrumentation around a loop the
application wrote): one run per chain of calls that continue one another.

A model request carries the exchange so far, so a call continues the previous one when its input begins with the
previous call's input (compared by role and text); one that does not starts the next chain. Without message
content, a call after one that answered (its finish reason asked for no tool) starts the next chain: the loop
had ended; with no finish reason either, the calls stay one run. (Conversations of several runs, which a
conversation id joins, are the grade step's: `otelgrade.grade.conversations`.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.facts import LLMFacts, requested_calls
from otelgrade.rebuild.span_readers import announces_tools


def split_by_continuation(calls: Sequence[tuple[str, LLMFacts]]) -> list[list[str]]:
    """The span ids of `calls` (in call order) grouped into chains of calls that continue one another: the latest
    chain a call continues, which need not be the last (an agent called as a tool holds a conversation of its own
    while its caller waits)."""
    groups: list[list[str]] = []
    previous: list[list[tuple[str, str]] | None] = []  # each chain's last request
    for span_id, facts in calls:
        current = _said(facts.input_messages)
        if groups and (previous[-1] is None or not current or _continues(previous[-1], current)):
            chain = len(groups) - 1
        else:
            chain = next((g for g in reversed(range(len(groups) - 1)) if _continued(previous[g], current)), -1)
        if chain < 0:
            groups.append([span_id])
            previous.append(current or None)
        else:
            groups[chain].append(span_id)
            previous[chain] = current or previous[chain]
    return groups


def _continued(earlier: list[tuple[str, str]] | None, later: list[tuple[str, str]]) -> bool:
    return earlier is not None and any(role == "user" for role, _ in earlier) and _continues(earlier, later)


def join_called_conversations(
    calls: Sequence[tuple[str, LLMFacts]], groups: list[list[str]], times: Mapping[str, tuple[int, int]]
) -> list[list[str]]:
    """Chains of calls joined into the chain that called them: an agent called as a tool whose framework writes no
    span for it leaves only its own conversation, held while its caller's tool call is pending (after the call that
    asked for it ended, before the caller's next call began). It is that tool's work when it was asked what the
    call's arguments say (its first user turn is one of their values), or answered what the caller was told the
    call returned. `times` are each call's (start, end)."""
    if len(groups) < 2:
        return groups
    facts = dict(calls)
    joined = [list(g) for g in groups]
    for later in sorted(range(1, len(joined)), key=lambda g: times[joined[g][0]][0]):
        chain = joined[later]
        start, end = times[chain[0]][0], max(times[s][1] for s in chain)
        asked = msg.last_user_text(facts[chain[0]].input_messages)
        answer = msg.assistant_text(facts[chain[-1]].output_messages)
        for caller in joined[:later]:
            if chain and caller and caller is not chain and _called(caller, facts, times, start, end, asked, answer):
                caller.extend(chain)
                caller.sort(key=lambda s: times[s][0])
                joined[later] = []
                break
    return [g for g in joined if g]


def _called(
    caller: list[str],
    facts: Mapping[str, LLMFacts],
    times: Mapping[str, tuple[int, int]],
    start: int,
    end: int,
    asked: str | None,
    answer: str | None,
) -> bool:
    """Whether a chain that ran from `start` to `end` ran inside a tool call of `caller` pending all that time."""
    before = [s for s in caller if times[s][1] <= start]
    if not before or any(start <= times[s][0] < end for s in caller):
        return False
    pending = requested_calls(facts[before[-1]].output_messages)
    after = next((s for s in caller if times[s][0] >= end), None)
    told = msg.tool_results(facts[after].input_messages) if after is not None else {}
    for call in pending:
        values = call.arguments.values() if isinstance(call.arguments, dict) else ()
        if (asked and asked in values) or (answer and call.call_id and told.get(call.call_id) == answer):
            return True
    return False


def _said(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """A request's messages as (role, text), system prompts left out (an application may vary them per call)."""
    return [(str(m.get("role")), content_text(m.get("content"))) for m in messages if m.get("role") != "system"]


def _continues(earlier: list[tuple[str, str]], later: list[tuple[str, str]]) -> bool:
    """Whether the later request carries the earlier one's conversation: as long, and holding its first user
    turn (an instrumentation may write an assistant turn's empty text differently from call to call)."""
    first_user = next((m for m in earlier if m[0] == "user"), None)
    return first_user is None or (len(later) >= len(earlier) and first_user in later)


def split_after_answers(calls: Sequence[tuple[str, LLMFacts]]) -> list[list[str]]:
    """The span ids of `calls` (in call order, no content) grouped into loops: each ends on a call that answered."""
    groups: list[list[str]] = []
    answered = True
    for span_id, facts in calls:
        if answered:
            groups.append([])
        groups[-1].append(span_id)
        answered = facts.finish_reason is not None and not announces_tools(facts.finish_reason)
    return groups
