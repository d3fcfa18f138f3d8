"""Regular expressions with a time budget: every pattern from a config or a span is compiled and run here.
A leaf, so that routing and rebuilding can use it as well as graders.

A pattern is checked with `re` (so what is valid, and the error message when it is not, stay Python's) and
matched by the `regex` engine in its `re`-compatible mode, which releases the GIL while it matches and gives
up when the budget is spent. All matching inside one `budget()` shares it (the grading loop opens one per
trace and one per grader call inside it), so a grader that matches many texts, or a trace of many runs,
cannot multiply it; outside a budget each call gets `BUDGET_SECONDS`. A pattern that gives up raises
`PatternTimeout`, which grades `error`, never `fail` (`graders.grade_safely` turns it into one, reason
`regex_timeout`).

Compiling is bounded too: the `regex` engine writes out counted repeats (`a{1000}` is a thousand steps), so a
pattern whose written-out size passes `MAX_PATTERN_SIZE` is refused before it is compiled, whoever wrote it.

Patterns compiled while a config is read (`configured()`) are also checked for catastrophic backtracking, in
two ways, each refusing the pattern with the fix:
- the shape: a repeat of unbounded length whose body is another unbounded repeat and parts that may match
  nothing (`(a+)+`, `(a*b?)*`, `(\\w+\\s?)+`) can split one text in exponentially many ways;
- probes: for every repeated part, a text that repeats what it matches and then fails (`aaaa…a!` for
  `^(a|a)+$`) is matched by the engine within `PROBE_SECONDS` (this finds overlapping repeats such as
  `(a|a)*`, `(x+x+)+y`, and polynomial blow-ups of degree three and more).
It is a check of known shapes, not a proof, which is why matching keeps its time budget.
"""

from __future__ import annotations

import re
import re._parser as sre  # the stdlib's own pattern parser: what each part of a pattern is
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import regex

BUDGET_SECONDS = 1.0
"""The time all matching of one grader call may take, on text of any size."""
TRACE_BUDGET_SECONDS = 2.0
"""The time all matching for one trace may take: routing and every grader of every run in it."""
MAX_PATTERN_SIZE = 20_000
"""The largest pattern compiled, in steps with counted repeats written out (`(ab){100}` is 200): compiling it
takes about 0.1 s and 5 MB; a larger one is refused."""
PROBE_SECONDS = 0.1
"""How long one backtracking probe of a configured pattern may take (a linear pattern takes microseconds)."""
PROBE_REPEATS = (32, 400)  # exponential blow-up shows at 32 repeats, cubic and worse at 400
PROBE_TAILS = ("\x00", "!", "\n")  # what ends a probe so that the match fails

PatternError = re.error
"""An invalid pattern (raised when compiling)."""

# `re` flag bits and the `regex` flags they mean (most share their values; ASCII does not).
_FLAGS = {re.I: regex.I, re.L: regex.L, re.M: regex.M, re.S: regex.S, re.U: regex.U, re.X: regex.X, re.A: regex.A}

_deadline: ContextVar[float | None] = ContextVar("otelgrade_pattern_deadline", default=None)
_configuring: ContextVar[bool] = ContextVar("otelgrade_pattern_configuring", default=False)


class PatternTimeout(RuntimeError):
    """A pattern did not finish within the budget (it backtracks without end on this text)."""

    def __init__(self, pattern: str) -> None:
        super().__init__(
            f"the regular expression /{_shown(pattern)}/ did not finish within its time budget on this run's "
            "text (catastrophic backtracking); simplify the pattern"
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


@contextmanager
def configured() -> Iterator[None]:
    """Patterns compiled inside come from a config: each is probed for catastrophic backtracking."""
    token = _configuring.set(True)
    try:
        yield
    finally:
        _configuring.reset(token)


def _remaining() -> float:
    deadline = _deadline.get()
    return BUDGET_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())


class Pattern:
    """A pattern compiled with `re` flags (an int or `re.RegexFlag`; raises `PatternError` where `re` would, and
    for a pattern too large to compile or, inside `configured()`, one that backtracks without end), whose
    matching methods raise `PatternTimeout` once the budget is spent."""

    __slots__ = ("_compiled", "flags", "groups", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        if len(source) > MAX_PATTERN_SIZE:
            raise PatternError(_too_large(source, len(source)))
        parsed = sre.parse(source, flags)  # raises re.error, with Python's message, for what `re` would refuse
        size = _size(parsed)
        if size > MAX_PATTERN_SIZE:
            raise PatternError(_too_large(source, size))
        self.source, self.flags = source, flags
        self._compiled: regex.Pattern[str] = regex.compile(source, _regex_flags(flags) | regex.V0)
        self.groups: int = self._compiled.groups
        if _configuring.get():
            _refuse_nested_repeats(source, parsed)
            _refuse_backtracking(self._compiled, source, parsed)

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


def check_configured(source: str, flags: int = 0) -> None:
    """For a pattern a config gives but a grader compiles only when it grades: inside `configured()`, raise
    `PatternError` if it is too large or backtracks catastrophically (an invalid one is left to the grader)."""
    if not _configuring.get():
        return
    try:
        sre.parse(source, flags)
    except PatternError:
        return
    Pattern(source, flags)


def search(source: str, text: str, flags: int = 0) -> regex.Match[str] | None:
    """`re.search(source, text, flags)` within the budget."""
    return Pattern(source, flags).search(text)


def _regex_flags(flags: int) -> int:
    out = 0
    for bit, flag in _FLAGS.items():
        if flags & bit:
            out |= flag
    return out


def _shown(pattern: str) -> str:
    return pattern if len(pattern) <= 80 else pattern[:77] + "..."


def _too_large(source: str, size: int) -> str:
    return (
        f"the regular expression /{_shown(source)}/ is too large to compile: {size} steps with its counted repeats "
        f"written out, over the {MAX_PATTERN_SIZE} allowed; shorten it or lower its repeat counts"
    )


# --- the parse tree: size, and the texts that probe it ------------------------------------------------------

_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT}
_SAMPLE_OF_CATEGORY = {"DIGIT": "1", "SPACE": " ", "WORD": "a", "LINEBREAK": "\n"}
_OTHER_OF_CATEGORY = {"DIGIT": "a", "SPACE": "a", "WORD": "!", "LINEBREAK": "a"}


def _size(items: Any) -> int:
    """Steps of a parsed pattern with counted repeats written out, as the `regex` engine compiles it."""
    total = 0
    for op, av in items:
        if op in _REPEATS or op is sre.POSSESSIVE_REPEAT:
            low, high, body = av
            total += 1 + _size(body) * (max(low, 1) if high is sre.MAXREPEAT else max(high, 1))
        elif op is sre.SUBPATTERN:
            total += 1 + _size(av[-1])
        elif op in (sre.ATOMIC_GROUP,):
            total += 1 + _size(av)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            total += 1 + _size(av[1])
        elif op is sre.BRANCH:
            total += 1 + sum(_size(alternative) for alternative in av[1])
        elif op is sre.GROUPREF_EXISTS:
            total += 1 + sum(_size(alternative) for alternative in av[1:] if alternative is not None)
        else:
            total += 1
    return total


def _sample(items: Any) -> str:
    """A short text the parsed pattern (part) matches, near enough for a probe (look-arounds are not honoured)."""
    out = []
    for op, av in items:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.NOT_LITERAL:
            out.append("b" if av == ord("a") else "a")
        elif op is sre.ANY:
            out.append("a")
        elif op is sre.IN:
            out.append(_member(av))
        elif op in _REPEATS or op is sre.POSSESSIVE_REPEAT:
            out.append(_sample(av[2]) * max(av[0], 1))
        elif op is sre.SUBPATTERN:
            out.append(_sample(av[-1]))
        elif op is sre.ATOMIC_GROUP:
            out.append(_sample(av))
        elif op is sre.BRANCH:
            out.append(max((_sample(alternative) for alternative in av[1]), key=len))
    return "".join(out)


def _member(items: Any) -> str:
    """A character of a character class."""
    negated = bool(items) and items[0][0] is sre.NEGATE
    if not negated:
        op, av = items[0]
        if op is sre.LITERAL:
            return chr(av)
        if op is sre.RANGE:
            return chr(av[0])
        if op is sre.CATEGORY:
            return _category(str(av), _SAMPLE_OF_CATEGORY, _OTHER_OF_CATEGORY)
        return "a"
    for candidate in "a1 !Z\x01":
        if not any(_in_item(candidate, op, av) for op, av in items[1:]):
            return candidate
    return "\x02"


def _category(name: str, of: dict[str, str], of_not: dict[str, str]) -> str:
    kind = name.removeprefix("CATEGORY_").removeprefix("UNI_").removeprefix("LOC_")
    return of_not.get(kind.removeprefix("NOT_"), "a") if kind.startswith("NOT_") else of.get(kind, "a")


def _in_item(char: str, op: Any, av: Any) -> bool:
    if op is sre.LITERAL:
        return char == chr(av)
    if op is sre.RANGE:
        return bool(av[0] <= ord(char) <= av[1])
    if op is sre.CATEGORY:
        return char == _category(str(av), _SAMPLE_OF_CATEGORY, _OTHER_OF_CATEGORY)
    return False


def _repeated_parts(items: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(a text that leads to it, a text it matches once) for every part that may repeat more than once."""
    for op, av in items:
        if op in _REPEATS and (av[1] is sre.MAXREPEAT or av[1] > 1):
            unit = _sample(av[2])
            if unit:
                yield prefix, unit
            yield from _repeated_parts(av[2], prefix)
        elif op is sre.SUBPATTERN:
            yield from _repeated_parts(av[-1], prefix)
        elif op is sre.BRANCH:
            for alternative in av[1]:
                yield from _repeated_parts(alternative, prefix)
        prefix += _sample([(op, av)])


def _unbounded(op: Any, av: Any) -> bool:
    return op in _REPEATS and av[1] is sre.MAXREPEAT


def _may_be_empty(items: Any) -> bool:
    """Whether the parsed part can match the empty text (look-arounds and anchors count as empty)."""
    for op, av in items:
        if op in _REPEATS or op is sre.POSSESSIVE_REPEAT:
            if av[0] and not _may_be_empty(av[2]):
                return False
        elif op is sre.SUBPATTERN:
            if not _may_be_empty(av[-1]):
                return False
        elif op is sre.ATOMIC_GROUP:
            if not _may_be_empty(av):
                return False
        elif op is sre.BRANCH:
            if not any(_may_be_empty(alternative) for alternative in av[1]):
                return False
        elif op not in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return False
    return True


def _body(items: Any) -> Any:
    """The items of a part, looking through a group that holds all of it."""
    while len(items) == 1 and items[0][0] is sre.SUBPATTERN:
        items = items[0][1][-1]
    return items


def _nested_repeat(items: Any) -> bool:
    """Whether an unbounded repeat holds an unbounded repeat beside only parts that may match nothing."""
    for op, av in items:
        if _unbounded(op, av):
            body = list(_body(av[2]))
            for i, (inner_op, inner_av) in enumerate(body):
                if _unbounded(inner_op, inner_av) and _may_be_empty(body[:i] + body[i + 1 :]):
                    return True
        children = _children(op, av)
        if any(_nested_repeat(child) for child in children):
            return True
    return False


def _children(op: Any, av: Any) -> list[Any]:
    if op in _REPEATS or op is sre.POSSESSIVE_REPEAT:
        return [av[2]]
    if op is sre.SUBPATTERN:
        return [av[-1]]
    if op is sre.BRANCH:
        return list(av[1])
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [av[1]]
    return []


def _refuse_nested_repeats(source: str, parsed: Any) -> None:
    if _nested_repeat(parsed):
        raise PatternError(
            f"the regular expression /{_shown(source)}/ backtracks catastrophically: it repeats a repeat (such as "
            f"(a+)+ or (\\w+\\s?)*), which can split one text in exponentially many ways before it fails. {_FIX}"
        )


def _refuse_backtracking(compiled: regex.Pattern[str], source: str, parsed: Any) -> None:
    """Raise `PatternError` with the fix if a probe does not finish within `PROBE_SECONDS`."""
    for prefix, unit in dict.fromkeys(_repeated_parts(parsed)):
        for count in PROBE_REPEATS:
            for tail in PROBE_TAILS:
                probe = prefix + unit * count + tail
                try:
                    compiled.search(probe, timeout=PROBE_SECONDS)
                except TimeoutError:
                    raise PatternError(_backtracks(source, unit, count, tail)) from None


def _backtracks(source: str, unit: str, count: int, tail: str) -> str:
    return (
        f"the regular expression /{_shown(source)}/ backtracks catastrophically: on {unit[:20]!r} repeated {count} "
        f"times then {tail!r} it did not finish within {PROBE_SECONDS:g}s, and a run's text can be far longer. "
        f"A repeat whose body can match the same text in more than one way tries exponentially many splits. {_FIX}"
    )


_FIX = (
    "Make each repeat unambiguous: (a+)+ -> a+, (a|a)* -> a*, (\\w+\\s?)+ -> \\w+(\\s\\w+)*, "
    "(.*a){20} -> ([^a]*a){20}; or make the inner repeat atomic ((?>a+)+) or possessive (a++)"
)
