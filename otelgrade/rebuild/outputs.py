"""A run's recorded answer that is a placeholder (`None`, `null`, `undefined`, empty: what a framework writes when
its agent returned nothing) is no answer: the last model output stands in, else the run lacks its output."""

from __future__ import annotations

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
