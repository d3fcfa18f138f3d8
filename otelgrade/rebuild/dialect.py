"""The `Dialect` record: everything the rebuild knows about one instrumentation convention.

Each module of `dialects/` declares one as `DIALECT`; the package collects them by priority.
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
    detect: Callable[[Span], bool]  # cheap: True when the span may be this dialect's (read may still decline)
    read: Callable[[Span], Facts | None]  # the span's facts, or None when it is none of its kinds
    blobs: frozenset[str] = frozenset()  # attributes holding whole conversations or schemas
    blob_prefixes: tuple[str, ...] = ()  # the same, for flattened attributes
    agent_name_keys: tuple[str, ...] = ()  # attributes that name the agent on any span of a run
