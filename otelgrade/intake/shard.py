"""Split an OTLP export request among grading workers by the trace each span (or log record) belongs to,
without decoding what is handed on: each worker gets a request holding its items' bytes as they arrived.

A trace request is parsed once as its spans' trace ids alone (the last occurrence of the field wins, as in the
worker's decode); a resource whose every span one worker owns (most: a resource usually sends one trace) goes to
that worker as the bytes it came in. Other resources, and log requests, are read as an envelope whose resources,
scopes and items stay undecoded bytes (traces and logs share that shape: resource = 1, scopes = 2, schema_url =
3; scope = 1, items = 2, schema_url = 3), and each item goes where its trace id says. A conversation's turn
record goes by its conversation instead. A worker's part is the same envelope holding only its items, a valid
export request of the signal.
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
_RESOURCES_TAG = 0x0A  # a request's field 1 (resource_spans / resource_logs), length-delimited
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
def _types() -> tuple[type[Message], ...]:
    """(the envelope of a request, a span's trace id alone, a log record's trace id alone, a trace request as its
    spans' trace ids)."""
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
    # The same request seen as its spans' trace ids alone (read by the parser, as the worker's decode reads them).
    _field(proto.message_type.add(name="IdsScope"), "items", 2, repeated=True, of="SpanIds")
    _field(proto.message_type.add(name="IdsResource"), "scopes", 2, repeated=True, of="IdsScope")
    _field(proto.message_type.add(name="IdsRequest"), "resources", 1, repeated=True, of="IdsResource")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    get = message_factory.GetMessageClass
    return tuple(
        get(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")) for name in ("Request", "SpanIds", "LogIds", "IdsRequest")
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
    if signal == "traces":
        return _split_traces(body, workers)
    request = _envelope(body)
    parts: dict[int, list[bytes]] = {}  # worker -> its resources, each encoded as a `resources` field
    for resource in request.resources:
        _split_resource(resource, signal, workers, parts)
    return {worker: b"".join(pieces) for worker, pieces in sorted(parts.items())}


def _envelope(body: bytes) -> Any:
    try:
        return _types()[0].FromString(body)
    except _ProtoDecodeError as exc:
        raise ShardError(str(exc)) from None


def _split_traces(body: bytes, workers: int) -> dict[int, bytes]:
    """`split` of a trace request: each span's owner read from the request parsed as trace ids alone; a resource one
    worker owns (most: a resource usually sends one trace) handed on as its bytes came, the others split span by
    span."""
    try:
        ids: Any = _types()[3].FromString(body)
    except _ProtoDecodeError as exc:
        raise ShardError(str(exc)) from None
    fields = _resource_fields(body, len(ids.resources))
    parts: dict[int, list[bytes]] = {}
    request: Any = None  # the envelope, parsed only for a resource whose spans several workers own
    for index, resource in enumerate(ids.resources):
        owners_of = [
            [owner(t, workers) if len(t := span.trace_id) == _TRACE_ID_LEN else 0 for span in scope.items]
            for scope in resource.scopes
        ]
        owners = {worker for scope in owners_of for worker in scope}
        if len(owners) == 1 and fields is not None:
            start, end = fields[index]
            parts.setdefault(owners.pop(), []).append(body[start:end])
            continue
        request = _envelope(body) if request is None else request
        _split_resource(request.resources[index], "traces", workers, parts, owners_of)
    return {worker: b"".join(pieces) for worker, pieces in sorted(parts.items())}


def _resource_fields(body: bytes, count: int) -> list[tuple[int, int]] | None:
    """Where each of the `count` resources of a request lies in its bytes, tag and length included; None when the
    body holds anything else at the top (fields the parser skipped), so the parts are serialized instead."""
    found, at, size = [], 0, len(body)
    while at < size:
        if body[at] != _RESOURCES_TAG:
            return None
        start, at, length, shift = at, at + 1, 0, 0
        while at < size and body[at] & 0x80:
            length |= (body[at] & 0x7F) << shift
            at, shift = at + 1, shift + 7
        if at >= size:
            return None
        length |= body[at] << shift
        at += 1 + length
        found.append((start, at))
    return found if at == size and len(found) == count else None


def _split_resource(
    resource: Any, signal: Signal, workers: int, parts: dict[int, list[bytes]], owners_of: Any = None
) -> None:
    """Add one resource of a request's envelope to the parts of the workers owning its items (`owners_of`: each
    scope's list of its items' owners, when already known)."""
    scopes: list[tuple[Any, dict[int, list[bytes]]]] = []
    for index, scope in enumerate(resource.scopes):
        mine: dict[int, list[bytes]] = {}
        if owners_of is not None:
            for item, worker in zip(scope.items, owners_of[index], strict=True):
                mine.setdefault(worker, []).append(item)
            scopes.append((scope, mine))
            continue
        for item in scope.items:
            worker = _turn_owner(item, workers) if signal == "logs" else None
            if worker is None:
                trace_id = trace_id_of(item, signal)
                worker = owner(trace_id, workers) if len(trace_id) == _TRACE_ID_LEN else 0
            mine.setdefault(worker, []).append(item)
        scopes.append((scope, mine))
    owners = {worker for _, mine in scopes for worker in mine}
    if len(owners) == 1:  # a resource whose every item one worker owns
        parts.setdefault(owners.pop(), []).append(_resource_field(resource.SerializeToString()))
        return
    held: dict[int, Any] = {}  # worker -> this resource, with only its items
    for scope, mine in scopes:
        for worker, items in mine.items():
            into = held.get(worker)
            if into is None:
                into = held[worker] = _types()[0]().resources.add(
                    resource=resource.resource, schema_url=resource.schema_url
                )
            into.scopes.add(scope=scope.scope, items=items, schema_url=scope.schema_url)
    for worker, into in held.items():
        parts.setdefault(worker, []).append(_resource_field(into.SerializeToString()))


def _resource_field(encoded: bytes) -> bytes:
    """A request's `resources` field (1, length-delimited) holding one encoded resource."""
    length, size = bytearray(), len(encoded)
    while size > 0x7F:
        length.append(size & 0x7F | 0x80)
        size >>= 7
    length.append(size)
    return b"\n" + bytes(length) + encoded
