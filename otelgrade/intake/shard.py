"""Split an OTLP export request among grading workers by the trace each span (or log record) belongs to,
without decoding what is handed on: each worker gets a request holding its items' bytes as they arrived.

The request is read as an envelope whose resources, scopes and items stay undecoded bytes (traces and logs
share that shape: resource = 1, scopes = 2, schema_url = 3; scope = 1, items = 2, schema_url = 3); only an
item's trace id is read, from the bytes' front when the sender wrote it first (as the OpenTelemetry SDKs
do for spans) and it cannot occur again, else by parsing that one field (the last occurrence wins, as in the
worker's decode). A conversation's turn record goes by its conversation
instead. A worker's part is the same envelope holding only its items, a valid export request of the signal.
"""

from __future__ import annotations

import zlib
from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError as _ProtoDecodeError
from google.protobuf.message import Message
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from otelgrade.core.spans import CONVERSATION_TURN_EVENT
from otelgrade.intake.receivers.base import Signal

_BYTES = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
_MESSAGE = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
_REPEATED = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
_PACKAGE = "otelgrade.shard"
# Where an item's trace id is: Span.trace_id = 1, LogRecord.trace_id = 9 (both bytes).
_TRACE_FIELD: dict[Signal, int] = {"traces": 1, "logs": 9}
_TRACE_ID_LEN = 16
_FIRST_TRACE_ID = b"\n\x10"  # a span's field 1 (trace_id), 16 bytes long: its tag and length
CONVERSATION_ID = "gen_ai.conversation.id"  # where a turn record names its conversation
_TURN_MARK = CONVERSATION_TURN_EVENT.encode()


def _field(message: Any, name: str, number: int, repeated: bool = False, of: str = "") -> None:
    message.field.add(
        name=name,
        number=number,
        label=_REPEATED if repeated else _OPTIONAL,
        type=_MESSAGE if of else _BYTES,
        type_name=f".{_PACKAGE}.{of}" if of else None,
    )


@cache
def _types() -> tuple[type[Message], type[Message], type[Message]]:
    """(the envelope of a request, a span's trace id alone, a log record's trace id alone)."""
    proto = descriptor_pb2.FileDescriptorProto(name="otelgrade_shard.proto", package=_PACKAGE, syntax="proto3")
    scope = proto.message_type.add(name="Scope")
    _field(scope, "scope", 1)
    _field(scope, "items", 2, repeated=True)
    _field(scope, "schema_url", 3)
    resource = proto.message_type.add(name="Resource")
    _field(resource, "resource", 1)
    _field(resource, "scopes", 2, repeated=True, of="Scope")
    _field(resource, "schema_url", 3)
    _field(proto.message_type.add(name="Request"), "resources", 1, repeated=True, of="Resource")
    for name, number in (("SpanIds", _TRACE_FIELD["traces"]), ("LogIds", _TRACE_FIELD["logs"])):
        _field(proto.message_type.add(name=name), "trace_id", number)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    get = message_factory.GetMessageClass
    return (
        get(pool.FindMessageTypeByName(f"{_PACKAGE}.Request")),
        get(pool.FindMessageTypeByName(f"{_PACKAGE}.SpanIds")),
        get(pool.FindMessageTypeByName(f"{_PACKAGE}.LogIds")),
    )


class ShardError(ValueError):
    """The body is not a protobuf export request even as an envelope (the worker's decode says why)."""


def owner(trace_id: bytes, workers: int) -> int:
    """The worker that grades a trace: a stable hash of its id (the same in every process and run)."""
    return zlib.crc32(trace_id) % workers


def trace_id_of(item: bytes, signal: Signal) -> bytes:
    """The raw trace id of a span's or log record's bytes (b"" when it has none or does not parse), as decoding
    reads it: a field given twice is read from its last occurrence (protobuf's rule)."""
    if signal == "traces" and item[:2] == _FIRST_TRACE_ID and item.find(_FIRST_TRACE_ID, 18) < 0:
        return item[2:18]  # written first, and nothing after it could be the field again
    try:
        ids: Any = _types()[1 if signal == "traces" else 2].FromString(item)
    except _ProtoDecodeError:
        return b""
    trace_id: bytes = ids.trace_id
    return trace_id


def _turn_owner(item: bytes, workers: int) -> int | None:
    """The worker owning the conversation of a turn record (a run sent by a replica to the conversation router and
    back: it goes where the conversation is, not where its trace is); None for any other log record."""
    if _TURN_MARK not in item:
        return None
    try:
        record = LogRecord.FromString(item)
    except _ProtoDecodeError:
        return None
    if record.event_name != CONVERSATION_TURN_EVENT:
        return None
    for kv in record.attributes:
        if kv.key == CONVERSATION_ID:
            return owner(kv.value.string_value.encode(), workers)
    return None


def split(body: bytes, signal: Signal, workers: int) -> dict[int, bytes]:
    """Worker -> the part of `body` (a protobuf export request of `signal`) that worker owns. Items with no
    readable trace id go to worker 0, whose decode rejects and counts them. Raises `ShardError`."""
    if workers == 1:
        return {0: body}
    request_type = _types()[0]
    try:
        request: Any = request_type.FromString(body)
    except _ProtoDecodeError as exc:
        raise ShardError(str(exc)) from None
    parts: dict[int, list[bytes]] = {}  # worker -> its resources, each encoded as a `resources` field
    for resource in request.resources:
        scopes: list[tuple[Any, dict[int, list[bytes]]]] = []
        for scope in resource.scopes:
            mine: dict[int, list[bytes]] = {}
            for item in scope.items:
                worker = _turn_owner(item, workers) if signal == "logs" else None
                if worker is None:
                    trace_id = trace_id_of(item, signal)
                    worker = owner(trace_id, workers) if len(trace_id) == _TRACE_ID_LEN else 0
                mine.setdefault(worker, []).append(item)
            scopes.append((scope, mine))
        owners = {worker for _, mine in scopes for worker in mine}
        if len(owners) == 1:  # a resource whose every item one worker owns (most, when a resource sends one trace)
            parts.setdefault(owners.pop(), []).append(_resource_field(resource.SerializeToString()))
            continue
        held: dict[int, Any] = {}  # worker -> this resource, with only its items
        for scope, mine in scopes:
            for worker, items in mine.items():
                into = held.get(worker)
                if into is None:
                    into = held[worker] = request_type().resources.add(
                        resource=resource.resource, schema_url=resource.schema_url
                    )
                into.scopes.add(scope=scope.scope, items=items, schema_url=scope.schema_url)
        for worker, into in held.items():
            parts.setdefault(worker, []).append(_resource_field(into.SerializeToString()))
    return {worker: b"".join(pieces) for worker, pieces in sorted(parts.items())}


def _resource_field(encoded: bytes) -> bytes:
    """A request's `resources` field (1, length-delimited) holding one encoded resource."""
    length, size = bytearray(), len(encoded)
    while size > 0x7F:
        length.append(size & 0x7F | 0x80)
        size >>= 7
    length.append(size)
    return b"\n" + bytes(length) + encoded
