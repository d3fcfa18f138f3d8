"""Runs of a trace that holds model calls and no agent span (a provider SDK's instrumentation around a loop the
application wrote): one run per chain of calls that continue one another.

A model request carries the exchange so far, so a call continues the previous one when its input begins with the
previous call's input (compared by role and text); one that does not starts the next chain. Without message
content, a call after one that answered (its finish reason asked for no tool) starts the next chain: the loop
had ended; with no finish reason either, the calls stay one run. (Conversations of several runs, which a
conversation id joins, are the grade step's: `otelgrade.grade.conversations`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from otelgrade.core.trajectory import content_text
from otelgrade.rebuild.facts import LLMFacts
from otelgrade.rebuild.span_readers import announces_tools


def split_by_continuation(calls: Sequence[tuple[str, LLMFacts]]) -> list[list[str]]:
    """The span ids of `calls` (in call order) grouped into chains of calls that continue one another."""
    groups: list[list[str]] = []
    previous: list[tuple[str, str]] | None = None
    for span_id, facts in calls:
        current = _said(facts.input_messages)
        if groups and (previous is None or not current or _continues(previous, current)):
            groups[-1].append(span_id)
        else:
            groups.append([span_id])
        previous = current or previous
    return groups


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
