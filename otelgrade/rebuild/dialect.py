"""The `Dialect` record: everything the rebuild knows about one instrumentation convention.

Each module of `dialects/` declares one as `DIALECT`; the package collects them by priority and indexes
them by their marks, so a span is matched to its candidate dialects in one pass over its attribute keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from otelgrade.rebuild.facts import Facts
from otelgrade.spans import Span


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
