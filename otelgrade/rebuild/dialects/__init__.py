"""The dialect registry: every module in this package declares one `DIALECT`, found automatically.

`classify` finds a span's candidate dialects in one pass over its attribute keys (each dialect's `marks`, and
its span-name prefixes), then asks them in priority order: the first whose `read` gives facts wins; one that
declines (None, or an exception) passes the span to the next, down to generic GenAI.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from otelgrade.core.registry import Registry
from otelgrade.core.spans import Span
from otelgrade.intake.decode import EVENT_LOGGERS
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import Facts

DIALECT_NAMES: Registry[Dialect] = Registry("dialect", key="dialect")
"""Every built-in dialect by its name (the `source` of the runs it reads)."""
for _module in pkgutil.iter_modules(__path__):
    _dialect: Dialect = importlib.import_module(f"{__name__}.{_module.name}").DIALECT
    DIALECT_NAMES.add(_dialect.name, _dialect)
DIALECTS: tuple[Dialect, ...] = tuple(sorted(DIALECT_NAMES.values(), key=lambda d: d.priority))
"""The built-in dialects in the order they are asked (priority)."""
for _dialect in DIALECTS:
    for _scope, _event in _dialect.event_loggers.items():
        EVENT_LOGGERS.add(_scope, _event)
ANSWER_TOOLS: frozenset[str] = frozenset().union(*(d.answer_tools for d in DIALECTS))
"""Tools that deliver a run's answer rather than act, in any convention (a name hint)."""
TRANSFER_NAMES: tuple[str, ...] = tuple(dict.fromkeys(p for d in DIALECTS for p in d.transfer_names))
"""How the conventions' frameworks name their control transfers (a name hint)."""


def _marked_by(dialects: Sequence[Dialect]) -> dict[str, int]:
    """The index: each attribute key that marks a dialect -> a bit per dialect it marks (bit i is dialects[i])."""
    index: dict[str, int] = {}
    for i, dialect in enumerate(dialects):
        for key in dialect.marks:
            index[key] = index.get(key, 0) | 1 << i
    return index


_MARKED_BY = _marked_by(DIALECTS)
_MARKS = frozenset(_MARKED_BY)
_NAMED = tuple((d.name_prefixes, 1 << i) for i, d in enumerate(DIALECTS) if d.name_prefixes)


@dataclass(slots=True)
class Classified:
    dialect: str
    facts: Facts


def candidates(span: Span) -> tuple[Dialect, ...]:
    """The dialects whose marks the span carries, in priority order."""
    found = 0
    for key in _MARKS.intersection(span.attributes):
        found |= _MARKED_BY[key]
    for prefixes, bit in _NAMED:
        if span.name.startswith(prefixes):
            found |= bit
    return _dialects(found)


@cache
def _dialects(bits: int) -> tuple[Dialect, ...]:
    return tuple(d for i, d in enumerate(DIALECTS) if bits >> i & 1)


def classify(span: Span, extra: Sequence[Dialect] = ()) -> Classified | None:
    """The first dialect that reads the span (`extra` ones, from the config, asked first and for every span),
    with what it read. Never raises."""
    for dialect in (*extra, *candidates(span)) if extra else candidates(span):
        try:
            facts = dialect.read(span)
        except Exception:  # a span no reader anticipated must not cost the run
            continue
        if facts is not None:
            return Classified(dialect.name, facts)
    return None


__all__ = [
    "ANSWER_TOOLS",
    "DIALECTS",
    "DIALECT_NAMES",
    "EVENT_LOGGERS",
    "TRANSFER_NAMES",
    "Classified",
    "candidates",
    "classify",
]
