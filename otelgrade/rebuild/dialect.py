"""The `Dialect` record: everything otelgrade knows about one instrumentation convention, quirks included.

Each module of `dialects/` declares one as `DIALECT`; the package collects them by priority and indexes
them by their marks, so a span is matched to its candidate dialects in one pass over its attribute keys, and
hands their quirks to the steps that need them (decode keeps their event loggers' records; the tool-call match
leaves out their answer tools). A new convention is that one file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from otelgrade.core.spans import Span
from otelgrade.rebuild.facts import Facts


@dataclass(frozen=True, slots=True)
class Dialect:
    """How to spot a convention's spans, read them, and which of its attributes matter to the run."""

    name: str  # the `Trajectory.source` of runs it reads
    priority: int  # lower is asked first: most specific conventions first, generic GenAI last
    read: Callable[[Span], Facts | None]  # the span's facts, or None when it is none of its kinds
    marks: frozenset[str] = frozenset()  # attribute keys that make a span a candidate (read may still decline)
    name_prefixes: tuple[str, ...] = ()  # span-name prefixes that do the same
    blobs: frozenset[str] = frozenset()  # attributes holding whole conversations or schemas
    blob_prefixes: tuple[str, ...] = ()  # the same, for flattened attributes
    agent_name_keys: tuple[str, ...] = ()  # attributes that name the agent on any span of a run
    # tools that deliver the run's answer rather than act (not tool calls of the agent): a hint, see `hints`
    answer_tools: frozenset[str] = frozenset()
    # how the frameworks it traces name their control transfers (regular expressions over the tool name in lower
    # case, words joined by `_`): a hint that only breaks ties the trace's behaviour leaves open, see `handoffs`
    transfer_names: tuple[str, ...] = ()
    # the framework's own event logger: scope name -> the event name its log records are kept under (they carry
    # the run's content without a GenAI event name; decode drops other such records)
    event_loggers: Mapping[str, str] = field(default_factory=dict)
