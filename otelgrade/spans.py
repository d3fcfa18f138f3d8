"""The small records that travel from decode through assembly: spans and GenAI log events.

These are plain slotted dataclasses, not pydantic models: thousands are built per second on
the receive path and most are only held until their run completes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# OTLP Status.code values.
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2


@dataclass(slots=True)
class Event:
    """A span event, or a GenAI event that arrived as an OTLP log record (then `body` is set)."""

    name: str
    time_ns: int
    attributes: dict[str, Any]
    body: Any = None


@dataclass(slots=True)
class Span:
    """One received span. Ids are lowercase hex; `resource` is shared by every span of a batch."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    attributes: dict[str, Any]
    events: list[Event]
    resource: dict[str, Any]
    scope: str = ""
    scope_version: str = ""


@dataclass(slots=True)
class LogEvent:
    """A GenAI event carried by an OTLP log record, tied to the span named by its ids."""

    trace_id: str
    span_id: str
    event: Event
    resource: dict[str, Any] = field(default_factory=dict)
