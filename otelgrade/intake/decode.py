"""Decode OTLP export requests (protobuf or OTLP JSON) into `ReceivedSpan` and `LogEvent` records.

Undecodable payloads raise `DecodeError`; individual unusable spans or log records are
counted in the result instead, so one bad span never costs its batch's good spans.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError as _ProtoDecodeError
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.core.registry import Registry
from otelgrade.core.spans import (
    CONVERSATION_TURN_EVENT,
    TURN_SIGNATURE,
    Event,
    LogEvent,
    ReceivedSpan,
    any_value,
    attributes,
)
from otelgrade.intake.receivers.base import Encoding, Signal

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)


class DecodeError(ValueError):
    """The payload as a whole cannot be decoded (answered with INVALID_ARGUMENT / HTTP 400)."""


@dataclass(slots=True)
class DecodedTraces:
    spans: list[ReceivedSpan] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> count
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class DecodedLogs:
    events: list[LogEvent] = field(default_factory=list)
    received: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> count (not GenAI, no span, ...)
    rejected: dict[str, int] = field(default_factory=dict)  # malformed records
    warnings: list[str] = field(default_factory=list)
    # turn records, for the conversations: each one's body (trajectory JSON) and signature ("" when it has none)
    turns: list[tuple[str, str]] = field(default_factory=list)


# --- entry points -------------------------------------------------------------------------

MALFORMED = "malformed"  # the rejection reason of a span or log record that does not decode
REPAIRED = "some strings were not valid UTF-8 and were repaired with U+FFFD"


def decode_traces(body: bytes, encoding: Encoding = "protobuf") -> DecodedTraces:
    """Decode one ExportTraceServiceRequest body."""
    parsed = _parse(body, encoding, "traces")
    result = spans_from_request(parsed.request)
    parsed.add_to(result.rejected, result.warnings)
    return result


def decode_logs(body: bytes, encoding: Encoding = "protobuf") -> DecodedLogs:
    """Decode one ExportLogsServiceRequest body, keeping only GenAI events tied to a span."""
    parsed = _parse(body, encoding, "logs")
    result = log_events_from_request(parsed.request)
    parsed.add_to(result.rejected, result.warnings)
    return result


def protobuf_request(body: bytes, encoding: Encoding, signal: Signal) -> tuple[bytes, int, list[str]]:
    """The request as protobuf bytes (an OTLP JSON request parsed, with what could not be kept left out), the
    items left out, and the warnings; raises `DecodeError`."""
    if encoding == "protobuf":
        return body, 0, []
    parsed = _parse(body, encoding, signal)
    return parsed.request.SerializeToString(), parsed.malformed, parsed.warnings


def sniff_signal(body: bytes, encoding: Encoding) -> Signal:
    """Tell a traces request from a logs request (for files whose name does not say)."""
    if encoding == "json":
        doc, _ = _load_json(body)
        if isinstance(doc, dict) and "resourceLogs" in doc:
            return "logs"
        return "traces"
    # Field 1 of both requests is the repeated resource container; look one level deeper:
    # ResourceSpans.scope_spans and ResourceLogs.scope_logs are both field 2, so parse instead.
    try:
        traces = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    except _ProtoDecodeError:
        return "logs"
    has_spans = any(ss.spans for rs in traces.resource_spans for ss in rs.scope_spans)
    if has_spans:
        return "traces"
    try:
        logs = logs_service_pb2.ExportLogsServiceRequest.FromString(body)
    except _ProtoDecodeError:
        return "traces"
    has_logs = any(sl.log_records for rl in logs.resource_logs for sl in rl.scope_logs)
    return "logs" if has_logs else "traces"


# --- parsing ------------------------------------------------------------------------------
#
# A request that parses as a whole costs one parse. One that does not is parsed again part by part,
# so that a span or log record that does not decode costs only itself: protobuf reads the envelope
# with each item kept as raw bytes, JSON parses each item's object on its own. Text that is not valid
# UTF-8 (in JSON, also a lone UTF-16 surrogate) is repaired with U+FFFD, never refused.


@dataclass(frozen=True, slots=True)
class _Shape:
    """Where a signal's items sit in its request: resources -> scopes -> items (protobuf field names)."""

    request: type[Message]
    resources: str
    scopes: str
    items: str
    noun: str

    def json_keys(self) -> tuple[str, str, str]:
        return _camel(self.resources), _camel(self.scopes), _camel(self.items)

    def scope_type(self) -> str:
        return str(self._scope().full_name)

    def item_type(self) -> str:
        return str(self._scope().fields_by_name[self.items].message_type.full_name)

    def _scope(self) -> Any:
        resource = self.request.DESCRIPTOR.fields_by_name[self.resources].message_type
        return resource.fields_by_name[self.scopes].message_type


_SHAPES: dict[Signal, _Shape] = {
    "traces": _Shape(trace_service_pb2.ExportTraceServiceRequest, "resource_spans", "scope_spans", "spans", "span"),
    "logs": _Shape(
        logs_service_pb2.ExportLogsServiceRequest, "resource_logs", "scope_logs", "log_records", "log record"
    ),
}
# What ParseDict raises for JSON that does not fit the schema (TypeError for a number where a list belongs, ...).
_JSON_ERRORS = (json_format.ParseError, TypeError, ValueError, AttributeError, RecursionError)
# The JSON escape of a UTF-16 surrogate: only a body with one can decode to a string with a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# The bytes fields of a lenient message that are binary, never text to repair.
_BINARY = frozenset({"trace_id", "span_id", "parent_span_id", "bytes_value"})
_ERROR_CHARS = 300  # how much of a parse error a warning quotes


@dataclass(slots=True)
class _Parsed:
    request: Any
    warnings: list[str] = field(default_factory=list)
    malformed: int = 0  # items that did not decode and were left out

    def add_to(self, rejected: dict[str, int], warnings: list[str]) -> None:
        if self.malformed:
            rejected[MALFORMED] = rejected.get(MALFORMED, 0) + self.malformed
        warnings.extend(self.warnings)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _parse(body: bytes, encoding: Encoding, signal: Signal) -> _Parsed:
    shape = _SHAPES[signal]
    if encoding == "json":
        return _parse_json(body, shape)
    try:
        return _Parsed(shape.request.FromString(body))
    except _ProtoDecodeError as strict_error:
        return _salvage_protobuf(body, shape, strict_error)


def _salvage_protobuf(body: bytes, shape: _Shape, strict_error: _ProtoDecodeError) -> _Parsed:
    """Read the envelope with every item as raw bytes and text as bytes, repair its text, then decode each
    item on its own: as is, else repaired, else it is left out and counted."""
    try:
        envelope = _lenient_type(shape.request.DESCRIPTOR.full_name, raw_items=True).FromString(body)
    except _ProtoDecodeError:
        raise DecodeError(f"cannot decode protobuf {shape.noun}s: {_quote(strict_error)}") from None
    raw_items = []
    for resource in getattr(envelope, shape.resources):
        for scope in getattr(resource, shape.scopes):
            raw_items.append(list(getattr(scope, shape.items)))
            scope.ClearField(shape.items)
    repaired = _repair_utf8(envelope)
    request = shape.request.FromString(envelope.SerializeToString())
    scopes = [scope for resource in getattr(request, shape.resources) for scope in getattr(resource, shape.scopes)]
    lenient_item = _lenient_type(shape.item_type(), raw_items=False)
    parsed = _Parsed(request)
    kept = 0
    error = ""  # why the first malformed item did not decode
    for scope, raws in zip(scopes, raw_items, strict=True):
        items = getattr(scope, shape.items)
        for raw in raws:
            try:
                items.add().MergeFromString(raw)
                kept += 1
                continue
            except _ProtoDecodeError:
                del items[-1]
            try:
                item = lenient_item.FromString(raw)
            except _ProtoDecodeError as exc:
                parsed.malformed += 1
                error = error or _quote(exc)
                continue
            repaired |= _repair_utf8(item)
            items.add().MergeFromString(item.SerializeToString())
            kept += 1
    if parsed.malformed and not kept:
        raise DecodeError(f"cannot decode protobuf {shape.noun}s: {error}")
    if parsed.malformed:
        parsed.warnings.append(f"{parsed.malformed} {shape.noun}(s) could not be decoded: {error}")
    if repaired:
        parsed.warnings.append(REPAIRED)
    return parsed


def _load_json(body: bytes) -> tuple[Any, bool]:
    """The JSON document and whether its text had to be repaired; DecodeError if it is not JSON."""
    repaired = False
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        text, repaired = body.decode("utf-8-sig", "replace"), True
    try:
        doc = json.loads(text)
    except RecursionError:
        raise DecodeError("invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise DecodeError(f"invalid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(text):
        doc, fixed = _without_lone_surrogates(doc)
        repaired |= fixed
    return doc, repaired


def _parse_json(body: bytes, shape: _Shape) -> _Parsed:
    doc, repaired = _load_json(body)
    if not isinstance(doc, dict):
        raise DecodeError("invalid OTLP JSON: the top level must be an object")
    resources, scopes, items = shape.json_keys()
    # OTLP JSON writes trace and span ids as hex, where protobuf's JSON mapping expects base64.
    for resource in _dicts(doc.get(resources)):
        for scope in _dicts(resource.get(scopes)):
            for item in _dicts(scope.get(items)):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        item[key] = _hex_to_b64(item[key])
                for link in _dicts(item.get("links")):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _hex_to_b64(link[key])
    warnings = [REPAIRED] if repaired else []
    try:
        return _Parsed(json_format.ParseDict(doc, shape.request(), ignore_unknown_fields=True), warnings)
    except _JSON_ERRORS as exc:
        error = _quote(exc)
    parsed = _salvage_json(doc, shape)
    if parsed is None:
        raise DecodeError(f"invalid OTLP JSON: {error}")
    left_out = f"{parsed.malformed} {shape.noun}(s)" if parsed.malformed else f"parts holding no {shape.noun}s"
    parsed.warnings += [f"{left_out} did not fit OTLP JSON and were left out: {error}", *warnings]
    return parsed


def _salvage_json(doc: dict[str, Any], shape: _Shape) -> _Parsed | None:
    """Parse resource by resource, scope by scope, item by item: what does not fit is left out, and its
    items counted as malformed. None when no item could be kept."""
    resources, scopes, items = shape.json_keys()
    request = shape.request()
    parsed = _Parsed(request)
    kept = 0
    for resource_doc in _list(doc.get(resources)):
        scope_docs = _list(resource_doc.get(scopes)) if isinstance(resource_doc, dict) else []
        resource = _add_parsed(getattr(request, shape.resources), resource_doc, scopes)
        for scope_doc in scope_docs:
            item_docs = _list(scope_doc.get(items)) if isinstance(scope_doc, dict) else []
            scope = None if resource is None else _add_parsed(getattr(resource, shape.scopes), scope_doc, items)
            for item_doc in item_docs:
                if scope is not None and _add_parsed(getattr(scope, shape.items), item_doc) is not None:
                    kept += 1
                else:
                    parsed.malformed += 1
    return parsed if kept else None


def _add_parsed(container: Any, value: Any, leave_out: str = "") -> Any:
    """Parse a JSON object (without its `leave_out` key) into a new element of a repeated field;
    None, and no element, if it does not fit."""
    if not isinstance(value, dict):
        return None
    element = container.add()
    try:
        json_format.ParseDict({k: v for k, v in value.items() if k != leave_out}, element, ignore_unknown_fields=True)
    except _JSON_ERRORS:
        del container[-1]
        return None
    return element


def _without_lone_surrogates(doc: Any) -> tuple[Any, bool]:
    """`doc` with every lone UTF-16 surrogate in its strings and keys replaced by U+FFFD (in place,
    without recursion: the document may be nested as deeply as the JSON parser allows)."""
    fixed = False

    def clean(text: str) -> str:
        nonlocal fixed
        try:
            text.encode()
            return text
        except UnicodeEncodeError:
            fixed = True
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

    if isinstance(doc, str):
        return clean(doc), fixed
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            entries = list(node.items())
            node.clear()
            node.update((clean(k), clean(v) if isinstance(v, str) else v) for k, v in entries)
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    node[i] = clean(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
    return doc, fixed


def _quote(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS] + "..."


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in _list(value) if isinstance(v, dict)]


def _hex_to_b64(value: Any) -> str:
    """Hex id -> base64. An id already in base64 (protobuf's own JSON printer writes OTLP that way) is kept: its
    length tells it from hex. An unusable id becomes empty so the span is rejected, not the request."""
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64encode(bytes.fromhex(value)).decode()
    except ValueError:
        pass
    try:
        return value if len(base64.b64decode(value, validate=True)) in (8, 16) else ""
    except ValueError:
        return ""


@cache
def _lenient_pool(raw_items: bool) -> descriptor_pool.DescriptorPool:
    """OTLP's request schemas with every `string` field declared as `bytes`, so that any bytes parse and
    can be repaired; with `raw_items`, a scope's spans and log records are left as undecoded bytes too."""
    pool = descriptor_pool.DescriptorPool()
    raw = {(shape.scope_type(), shape.items) for shape in _SHAPES.values()} if raw_items else set()
    done: set[str] = set()

    def add(file_descriptor: Any) -> None:
        if file_descriptor.name in done:
            return
        for dependency in file_descriptor.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file_descriptor.CopyToProto(proto)
        for message in proto.message_type:
            _as_bytes(message, f"{proto.package}.{message.name}", raw)
        pool.Add(proto)
        done.add(file_descriptor.name)

    for shape in _SHAPES.values():
        add(shape.request.DESCRIPTOR.file)
    return pool


@cache
def _lenient_type(full_name: str, raw_items: bool) -> type[Message]:
    lenient: type[Message] = message_factory.GetMessageClass(_lenient_pool(raw_items).FindMessageTypeByName(full_name))
    return lenient


def _as_bytes(message: descriptor_pb2.DescriptorProto, name: str, raw: set[tuple[str, str]]) -> None:
    for f in message.field:
        if f.type == descriptor_pb2.FieldDescriptorProto.TYPE_STRING or (name, f.name) in raw:
            f.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
            f.ClearField("type_name")
    for nested in message.nested_type:
        _as_bytes(nested, f"{name}.{nested.name}", raw)


# --- protobuf messages -> records ---------------------------------------------------------


def _repair_utf8(message: Any) -> bool:
    """Replace invalid UTF-8 in every text field (declared as bytes) of a lenient message, in place;
    True if anything was replaced."""
    repaired = False
    for descriptor, value in message.ListFields():
        if descriptor.message_type is not None:
            for item in value if descriptor.is_repeated else (value,):
                repaired |= _repair_utf8(item)
        elif descriptor.type == descriptor.TYPE_BYTES and descriptor.name not in _BINARY:
            try:
                value.decode()
            except UnicodeDecodeError:
                setattr(message, descriptor.name, value.decode("utf-8", "replace").encode())
                repaired = True
    return repaired


def spans_from_request(request: Any) -> DecodedTraces:
    """Turn an ExportTraceServiceRequest into `ReceivedSpan`s: ids read, the rest kept as each span's bytes."""
    out = DecodedTraces()
    spans = out.spans
    rejected = out.rejected
    last_trace, last_hex = b"", ""
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            scope_version = scope_spans.scope.version
            for s in scope_spans.spans:
                trace_id, span_id = s.trace_id, s.span_id
                if len(trace_id) != 16 or trace_id == _ZERO_TRACE or len(span_id) != 8 or span_id == _ZERO_SPAN:
                    rejected["invalid_id"] = rejected.get("invalid_id", 0) + 1
                    continue
                parent = s.parent_span_id
                if trace_id != last_trace:  # a request's spans usually come grouped by trace: one hex string each
                    last_trace, last_hex = trace_id, trace_id.hex()
                spans.append(
                    ReceivedSpan(
                        last_hex,
                        span_id.hex(),
                        parent.hex() if len(parent) == 8 and parent != _ZERO_SPAN else None,
                        s.SerializeToString(),
                        resource,
                        scope,
                        scope_version,
                    )
                )
    return out


EVENT_LOGGERS: Registry[str] = Registry("event logger scope", key="event_loggers", known="scopes")
"""Agent frameworks whose own event logger carries the run's content as log records without a GenAI event name:
records of these scopes are kept under the given event name (the rebuild reads their bodies). Each dialect declares
its own (`Dialect.event_loggers`); the dialects package registers them here."""


def log_events_from_request(request: Any) -> DecodedLogs:
    """Turn an ExportLogsServiceRequest into GenAI `LogEvent`s (and agent frameworks' event-logger records);
    other records are dropped and counted."""
    out = DecodedLogs()
    dropped = out.dropped
    for resource_logs in request.resource_logs:
        resource = attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            scope_name = scope_logs.scope.name
            scope_event = EVENT_LOGGERS.get(scope_name) if scope_name in EVENT_LOGGERS else ""
            for record in scope_logs.log_records:
                out.received += 1
                attrs = attributes(record.attributes)
                name = record.event_name or attrs.get("event.name") or ""
                if name == CONVERSATION_TURN_EVENT and record.body.HasField("string_value"):
                    signature = attrs.get(TURN_SIGNATURE)
                    out.turns.append((record.body.string_value, signature if isinstance(signature, str) else ""))
                    continue
                if not isinstance(name, str) or not name.startswith("gen_ai."):
                    name = scope_event
                if not name:
                    dropped["not_genai"] = dropped.get("not_genai", 0) + 1
                    continue
                trace_id, span_id = record.trace_id, record.span_id
                if len(trace_id) != 16 or trace_id == _ZERO_TRACE or len(span_id) != 8 or span_id == _ZERO_SPAN:
                    dropped["no_span"] = dropped.get("no_span", 0) + 1
                    continue
                body = any_value(record.body) if record.HasField("body") else None
                time_ns = record.time_unix_nano or record.observed_time_unix_nano
                out.events.append(LogEvent(trace_id.hex(), span_id.hex(), Event(name, time_ns, attrs, body), resource))
    return out
