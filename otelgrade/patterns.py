"""Regular expressions with a time budget: every pattern from a config or a span is compiled and run here.
A leaf, so that routing and rebuilding can use it as well as graders.

A pattern is checked with `re` (so what is valid, and the error message when it is not, stay Python's) and
matched by the `regex` engine in its `re`-compatible mode, which releases the GIL while it matches and gives
up when the budget is spent. All matching inside one `budget()` shares it (the grading loop opens one per
grader call), so a grader that matches many texts cannot multiply it; outside a budget each call gets
`BUDGET_SECONDS`. A pattern that gives up raises `PatternTimeout`, which grades `error`, never `fail`
(`graders.grade_safely` turns it into one, reason `regex_timeout`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import regex

BUDGET_SECONDS = 1.0
"""The time all matching of one grader call may take, on text of any size."""

PatternError = re.error
"""An invalid pattern (raised when compiling)."""

# `re` flag bits and the `regex` flags they mean (most share their values; ASCII does not).
_FLAGS = {re.I: regex.I, re.L: regex.L, re.M: regex.M, re.S: regex.S, re.U: regex.U, re.X: regex.X, re.A: regex.A}

_deadline: ContextVar[float | None] = ContextVar("otelgrade_pattern_deadline", default=None)


class PatternTimeout(RuntimeError):
    """A pattern did not finish within the budget (it backtracks without end on this text)."""

    def __init__(self, pattern: str) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        super().__init__(
            f"the regular expression /{shown}/ did not finish within {BUDGET_SECONDS:g}s on this run's text "
            "(catastrophic backtracking); simplify the pattern"
        )


@contextmanager
def budget(seconds: float = BUDGET_SECONDS) -> Iterator[None]:
    """Matching inside shares `seconds` (a budget inside another never extends the outer one)."""
    outer = _deadline.get()
    deadline = time.monotonic() + seconds
    token = _deadline.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _deadline.reset(token)


def _remaining() -> float:
    deadline = _deadline.get()
    return BUDGET_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())


class Pattern:
    """A pattern compiled with `re` flags (an int or `re.RegexFlag`; raises `PatternError` where `re` would),
    whose matching methods raise `PatternTimeout` once the budget is spent."""

    __slots__ = ("_compiled", "flags", "groups", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        re.compile(source, flags)  # raises re.error, with Python's message, for what `re` would refuse
        self.source, self.flags = source, flags
        self._compiled: regex.Pattern[str] = regex.compile(source, _regex_flags(flags) | regex.V0)
        self.groups: int = self._compiled.groups

    def search(self, text: str) -> regex.Match[str] | None:
        try:
            return self._compiled.search(text, timeout=_remaining(), concurrent=True)
        except TimeoutError:
            raise PatternTimeout(self.source) from None

    def findall(self, text: str) -> list[Any]:
        try:
            return self._compiled.findall(text, timeout=_remaining(), concurrent=True)
        except TimeoutError:
            raise PatternTimeout(self.source) from None


def search(source: str, text: str, flags: int = 0) -> regex.Match[str] | None:
    """`re.search(source, text, flags)` within the budget."""
    return Pattern(source, flags).search(text)


def _regex_flags(flags: int) -> int:
    out = 0
    for bit, flag in _FLAGS.items():
        if flags & bit:
            out |= flag
    return out
