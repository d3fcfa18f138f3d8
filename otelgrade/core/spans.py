"""The small records that travel from decode through assembly: spans and GenAI log events, and how OTLP's
attribute values read as Python values.

Decode keeps a span as received (`ReceivedSpan`: its ids, and the rest as protobuf bytes): assembly needs only
the ids, and most spans are only held until their run completes. The rebuild reads each one in full (`read`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.trace.v1.trace_pb2 import Span as _SpanMessage

# OTLP Status.code values.
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2


@dataclass(slots=True)
class Event:
    """A span event, or a GenAI event that arrived as an OTLP log record (then `body` is set)."""

    name: str
    time_ns: int
    attributes: dict[str, Any]
    body: Any = None


CONVERSATION_TURN_EVENT = "otelgrade.conversation.turn"
"""The event name of a turn record: one rebuilt run of a conversation, sent between replicas as an OTLP log record
(its body the run's trajectory JSON) so that every turn of a conversation meets on the replica that owns it."""
TURN_SIGNATURE = "otelgrade.turn.signature"
"""The attribute of a turn record that proves a replica sent it: an HMAC of its body with the replicas' shared
`conversations.turn_token_file`."""


@dataclass(slots=True)
class Span:
    """One span, every field read. Ids are lowercase hex; `resource` is shared by every span of a batch."""

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

    def read(self) -> Span:
        return self


@dataclass(slots=True)
class ReceivedSpan:
    """A span as it arrived: the ids assembly needs, and the rest still as the protobuf bytes of an OTLP `Span`,
    read only when its run is rebuilt (holding bytes costs a fraction of the Python objects they become)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    message: bytes
    resource: dict[str, Any]
    scope: str = ""
    scope_version: str = ""

    def read(self) -> Span:
        """The span with every field."""
        m = _SpanMessage.FromString(self.message)
        return Span(
            self.trace_id,
            self.span_id,
            self.parent_id,
            m.name,
            m.kind,
            m.start_time_unix_nano,
            m.end_time_unix_nano,
            m.status.code,
            m.status.message,
            attributes(m.attributes),
            [Event(e.name, e.time_unix_nano, attributes(e.attributes)) for e in m.events],
            self.resource,
            self.scope,
            self.scope_version,
        )


AnySpan = Span | ReceivedSpan
"""What assembly holds and the rebuild takes: read spans, or spans as received."""


@dataclass(slots=True)
class LogEvent:
    """A GenAI event carried by an OTLP log record, tied to the span named by its ids."""

    trace_id: str
    span_id: str
    event: Event
    resource: dict[str, Any] = field(default_factory=dict)


# --- OTLP values --------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP AnyValue as a plain Python value (kvlists become dicts, bytes base64 text)."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    return _CONVERT[kind](value) if kind else None


def attributes(key_values: Any) -> dict[str, Any]:
    """OTLP KeyValues as a dict."""
    out = {}
    for kv in key_values:
        value = kv.value
        # Most attribute values are non-empty strings: read them without asking which kind the value is.
        if text := value.string_value:
            out[kv.key] = text
            continue
        kind = value.WhichOneof("value")
        out[kv.key] = text if kind == "string_value" else _CONVERT[kind](value) if kind else None
    return out


_CONVERT: dict[str, Callable[[Any], Any]] = {
    "int_value": lambda v: v.int_value,
    "bool_value": lambda v: v.bool_value,
    "double_value": lambda v: v.double_value,
    "array_value": lambda v: [any_value(item) for item in v.array_value.values],
    "kvlist_value": lambda v: attributes(v.kvlist_value.values),
    "bytes_value": lambda v: base64.b64encode(v.bytes_value).decode(),
}
