"""A run's recorded answer that is a placeholder (`None`, `null`, `undefined`, empty: what a framework writes when
its agent returned nothing) is no answer: the last model output stands in, else the run lacks its output. Nor is
the text of the failure its last model call ended on (a framework that reports the error as the agent's answer)."""

from __future__ import annotations

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import Disagreement

_PLACEHOLDERS = frozenset({"", "none", "null", "undefined", '""', "''"})


def placeholder(answer: str | None) -> bool:
    """The recorded answer says nothing: a language's null written out, or empty."""
    return answer is not None and answer.strip().lower() in _PLACEHOLDERS


def recorded_answer(answer: str | None) -> str | None:
    """The answer a run span recorded, None when it is a placeholder."""
    return None if placeholder(answer) else answer


def unanswered(answer: str | None, output: str | None, status: str) -> list[Disagreement]:
    """The disagreement of a run whose recorded answer is a placeholder with no model output to stand in."""
    if output is not None or status != "ok" or not placeholder(answer):
        return []
    detail = f"the answer recorded is {answer!r}, a placeholder, and no model output stands in"
    return [Disagreement(reason="placeholder_output", detail=detail, lacks=["output"])]


def reports_failure(answer: str, failed: Span) -> bool:
    """The recorded answer is the failed call's error text (its status message or an exception's message holds it),
    not a model's answer."""
    said = answer.strip()
    if not said:
        return False
    messages = [failed.status_message, *(e.attributes.get("exception.message") for e in failed.events)]
    return any(isinstance(m, str) and said in m for m in messages)
