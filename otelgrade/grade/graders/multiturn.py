"""Graders of whole conversations (`level: conversation` suites): how many turns it took, whether the user had to
ask the same thing again, whether it was handed to a person; and the judge presets that read the whole
conversation (did it end with the user's goal met, did the agent contradict itself).

Every run grader also grades a conversation (it sees one merged trajectory); these need one.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field
from rapidfuzz import fuzz

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import Pattern, PatternError
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Conversation, Trajectory, content_text
from otelgrade.grade.graders.base import GradeFn, grader
from otelgrade.grade.graders.presets import register_preset

ESCALATION_TOOLS = (
    r"^(escalate|escalate_to_human|transfer_to_human|handoff_to_human|hand_off_to_human|human_handoff"
    r"|request_human|talk_to_human|human|human_agent|operator)$"
)
ESCALATION_ATTRIBUTE = "otelgrade.conversation.escalated"


def _turns(trajectory: Trajectory) -> list[Trajectory] | None:
    return trajectory.runs if isinstance(trajectory, Conversation) else None


def _not_a_conversation(name: str) -> GradeResult:
    return GradeResult.error(
        f"{name} grades whole conversations: put it in a suite with `level: conversation`", reason="not_conversation"
    )


@grader("max_turns")
def max_turns(max: Annotated[int, Field(gt=0)]) -> GradeFn:
    """The conversation took at most `max` turns (request runs)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        turns = _turns(trajectory)
        if turns is None:
            return _not_a_conversation("max_turns")
        return GradeResult.check(len(turns) <= max, f"{len(turns)} turn(s), at most {max} allowed", turns=len(turns))

    return grade


def _normalized(text: str) -> str:
    return " ".join(text.casefold().split())


_WITH_DIGITS = re.compile(r"\S*\d\S*")  # a word holding a digit: a number, an order or ticket id, a date, a uuid


def _masked(text: str) -> tuple[str, tuple[str, ...]]:
    """The text with its numbers and ids masked, and those numbers and ids in order."""
    return _WITH_DIGITS.sub("#", text), tuple(m.strip(".,;:!?()[]{}'\"") for m in _WITH_DIGITS.findall(text))


@grader("user_repeats", reads=("input",))
def user_repeats(
    max: Annotated[int, Field(ge=0)] = 0,
    similarity: Annotated[float, Field(gt=0.0, le=1.0)] = 0.9,
    mask_ids: bool = True,
) -> GradeFn:
    """The user asked the same thing again at most `max` times: a turn's request repeats an earlier one when
    their texts (case and spacing aside) are at least `similarity` alike (1.0: identical). With `mask_ids` (the
    default), numbers and ids (words holding a digit) are masked before comparing and must be the same in both:
    "Where is my order 1007?" then "Where is my order 1008?" is a new request, not a repeat, while "where is my
    order 1007" again is one."""

    def grade(trajectory: Trajectory) -> GradeResult:
        turns = _turns(trajectory)
        if turns is None:
            return _not_a_conversation("user_repeats")
        asked: list[tuple[str, tuple[str, ...]]] = []
        repeats: list[tuple[int, str]] = []
        for number, turn in enumerate(turns, 1):
            text = _normalized(turn.input or "")
            if not text:
                continue
            request = _masked(text) if mask_ids else (text, ())
            if any(
                ids == request[1] and fuzz.ratio(request[0], earlier) / 100.0 >= similarity for earlier, ids in asked
            ):
                repeats.append((number, turn.input or ""))
            asked.append(request)
        if not repeats:
            return GradeResult.check(True, f"no request repeated across {len(turns)} turn(s)", repeats=0)
        shown = "; ".join(f"turn {n}: {text[:80]!r}" for n, text in repeats[:3])
        return GradeResult.check(
            len(repeats) <= max, f"{len(repeats)} repeated request(s) (at most {max}): {shown}", repeats=len(repeats)
        )

    return grade


@grader("escalation")
def escalation(
    expect: bool = False,
    tools: str | list[str] = ESCALATION_TOOLS,
    phrases: list[str] | None = None,
    attribute: str = ESCALATION_ATTRIBUTE,
) -> GradeFn:
    """Whether the conversation was handed to a person, as `expect`s (default: it was not). Handed over when a
    turn calls one of `tools` (names, or one `^regex`) or hands over to an agent so named, carries `attribute` set
    to true (the application's own marker), or an assistant message contains one of `phrases` (case aside)."""
    try:
        names = Pattern(tools) if isinstance(tools, str) and tools.startswith("^") else None
    except PatternError as exc:
        raise ConfigError(f"invalid regex {tools!r}: {exc}", "tools") from None
    listed = {tools} if isinstance(tools, str) else set(tools)
    wanted = [p.casefold() for p in phrases or [] if p]

    def named(name: str) -> bool:
        return names.search(name) is not None if names is not None else name in listed

    def handed_over(turns: list[Trajectory]) -> str | None:
        for number, turn in enumerate(turns, 1):
            value = turn.attributes.get(attribute)
            if value is True or str(value).lower() == "true":
                return f"turn {number} carries {attribute}=true"
            for call in turn.tool_calls:
                if named(call.name):
                    return f"turn {number} calls `{call.name}`"
            for handoff in turn.handoffs:  # `transfer_to_human` is read as a handoff to the agent `human`
                target = handoff.to_agent or ""
                if target and (named(target) or named(f"transfer_to_{target}")):
                    return f"turn {number} hands over to `{target}`"
            if wanted:
                for message in turn.messages:
                    text = content_text(message.get("content")).casefold() if message.get("role") == "assistant" else ""
                    found = next((p for p in wanted if p in text), None)
                    if found is not None:
                        return f"turn {number}'s answer says {found!r}"
        return None

    def grade(trajectory: Trajectory) -> GradeResult:
        turns = _turns(trajectory)
        if turns is None:
            return _not_a_conversation("escalation")
        how = handed_over(turns)
        said = f"handed to a person: {how}" if how else "not handed to a person"
        return GradeResult.check((how is not None) == expect, said, escalated=how is not None)

    return grade


CONVERSATION_ONLY = frozenset(
    {"max_turns", "user_repeats", "escalation", "conversation_resolved_judge", "conversation_consistent_judge"}
)
"""Grader types that only grade whole conversations: a `level: run` suite naming one is a config error."""

register_preset(
    "conversation_resolved",
    "Did the conversation end with the user's goal met, as all its turns show?",
    ("output", "messages"),
)
register_preset(
    "conversation_consistent",
    "Did the agent keep to what it said and did earlier in the conversation (no contradictions)?",
    ("messages",),
)
