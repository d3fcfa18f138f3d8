"""Decode OTLP export requests (protobuf or OTLP JSON) into `Span` and `LogEvent` records.

Undecodable payloads raise `DecodeError`; individual unusable spans or log records are
counted in the result instead, so one bad span never costs its batch's good spans.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError as _ProtoDecodeError
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.receivers.base import Encoding, Signal
from otelgrade.spans import Event, LogEvent, Span

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)


class DecodeError(ValueError):
    """The payload as a whole cannot be decoded (answered with INVALID_ARGUMENT / HTTP 400)."""


@dataclass(slots=True)
class DecodedTraces:
    spans: list[Span] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> count
    warnings: list[str] = field(default_factory=list)

    @property
    def rejected_count(self) -> int:
        return sum(self.rejected.values())


@dataclass(slots=True)
class DecodedLogs:
    events: list[LogEvent] = field(default_factory=list)
    received: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> count (not GenAI, no span, ...)
    rejected: dict[str, int] = field(default_factory=dict)  # malformed records
    warnings: list[str] = field(default_factory=list)

    @property
    def rejected_count(self) -> int:
        return sum(self.rejected.values())


# --- entry points -------------------------------------------------------------------------


def decode_traces(body: bytes, encoding: Encoding = "protobuf") -> DecodedTraces:
    """Decode one ExportTraceServiceRequest body."""
    request, warnings = _parse(body, encoding, "traces")
    result = spans_from_request(request)
    result.warnings.extend(warnings)
    return result


def decode_logs(body: bytes, encoding: Encoding = "protobuf") -> DecodedLogs:
    """Decode one ExportLogsServiceRequest body, keeping only GenAI events tied to a span."""
    request, warnings = _parse(body, encoding, "logs")
    result = log_events_from_request(request)
    result.warnings.extend(warnings)
    return result


def sniff_signal(body: bytes, encoding: Encoding) -> Signal:
    """Tell a traces request from a logs request (for files whose name does not say)."""
    if encoding == "json":
        try:
            doc = json.loads(body)
        except ValueError as exc:
            raise DecodeError(f"invalid JSON: {exc}") from exc
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


_REQUEST_TYPES: dict[Signal, type[Message]] = {
    "traces": trace_service_pb2.ExportTraceServiceRequest,
    "logs": logs_service_pb2.ExportLogsServiceRequest,
}


def _parse(body: bytes, encoding: Encoding, signal: Signal) -> tuple[Any, list[str]]:
    if encoding == "json":
        return _parse_json(body, signal), []
    try:
        return _REQUEST_TYPES[signal].FromString(body), []
    except _ProtoDecodeError as strict_error:
        # The strict parser also refuses strings that are not valid UTF-8. Retry with a schema
        # whose strings are bytes, so such values are repaired instead of losing the request.
        try:
            lenient = _lenient_type(signal).FromString(body)
        except _ProtoDecodeError:
            raise DecodeError(f"cannot decode protobuf {signal} request: {strict_error}") from None
        _repair_utf8(lenient)
        repaired = _REQUEST_TYPES[signal].FromString(lenient.SerializeToString())
        return repaired, ["some strings were not valid UTF-8 and were repaired with U+FFFD"]


def _parse_json(body: bytes, signal: Signal) -> Message:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise DecodeError("invalid OTLP JSON: the top level must be an object")
    resources, scopes, items = (
        ("resourceSpans", "scopeSpans", "spans") if signal == "traces" else ("resourceLogs", "scopeLogs", "logRecords")
    )
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
    try:
        return json_format.ParseDict(doc, _REQUEST_TYPES[signal](), ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise DecodeError(f"invalid OTLP JSON: {exc}") from exc


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _hex_to_b64(value: Any) -> str:
    """Hex id -> base64; an unusable id becomes empty so the span is rejected, not the request."""
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64encode(bytes.fromhex(value)).decode()
    except ValueError:
        return ""


@cache
def _lenient_type(signal: Signal) -> type[Message]:
    """The request type rebuilt with every `string` field declared as `bytes`."""
    pool = descriptor_pool.DescriptorPool()
    root = _REQUEST_TYPES[signal].DESCRIPTOR.file
    done: set[str] = set()

    def add(file_descriptor: Any) -> None:
        if file_descriptor.name in done:
            return
        for dependency in file_descriptor.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file_descriptor.CopyToProto(proto)
        for message in proto.message_type:
            _strings_to_bytes(message)
        pool.Add(proto)
        done.add(file_descriptor.name)

    add(root)
    lenient: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName(_REQUEST_TYPES[signal].DESCRIPTOR.full_name)
    )
    return lenient


def _strings_to_bytes(message: descriptor_pb2.DescriptorProto) -> None:
    for f in message.field:
        if f.type == descriptor_pb2.FieldDescriptorProto.TYPE_STRING:
            f.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
    for nested in message.nested_type:
        _strings_to_bytes(nested)


# --- protobuf messages -> records ---------------------------------------------------------


def _repair_utf8(message: Any) -> None:
    """Replace invalid UTF-8 in every (bytes-typed) string field of a lenient message, in place."""
    for descriptor, value in message.ListFields():
        if descriptor.message_type is not None:
            for item in value if descriptor.is_repeated else (value,):
                _repair_utf8(item)
        elif descriptor.type == descriptor.TYPE_BYTES and descriptor.name != "bytes_value" and not _is_id(descriptor):
            setattr(message, descriptor.name, value.decode("utf-8", "replace").encode())


def _is_id(descriptor: Any) -> bool:
    return descriptor.name in ("trace_id", "span_id", "parent_span_id")


def _array(value: Any) -> list[Any]:
    return [any_value(v) for v in value.array_value.values]


def _kvlist(value: Any) -> dict[str, Any]:
    return attributes(value.kvlist_value.values)


def _bytes(value: Any) -> str:
    return base64.b64encode(value.bytes_value).decode()


_CONVERT = {
    "int_value": lambda v: v.int_value,
    "bool_value": lambda v: v.bool_value,
    "double_value": lambda v: v.double_value,
    "array_value": _array,
    "kvlist_value": _kvlist,
    "bytes_value": _bytes,
}


def any_value(value: Any) -> Any:
    """An OTLP AnyValue as a plain Python value (kvlists become dicts, bytes base64 text)."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    return _CONVERT[kind](value) if kind else None


def attributes(key_values: Any) -> dict[str, Any]:
    out = {}
    for kv in key_values:
        value = kv.value
        kind = value.WhichOneof("value")
        # Most attribute values are strings: read them without a function call.
        out[kv.key] = value.string_value if kind == "string_value" else _CONVERT[kind](value) if kind else None
    return out


def spans_from_request(request: Any) -> DecodedTraces:
    """Turn an ExportTraceServiceRequest (strict or lenient) into `Span` records."""
    out = DecodedTraces()
    spans = out.spans
    rejected = out.rejected
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
                spans.append(
                    Span(
                        trace_id=trace_id.hex(),
                        span_id=span_id.hex(),
                        parent_id=parent.hex() if len(parent) == 8 and parent != _ZERO_SPAN else None,
                        name=s.name,
                        kind=s.kind,
                        start_ns=s.start_time_unix_nano,
                        end_ns=s.end_time_unix_nano,
                        status_code=s.status.code,
                        status_message=s.status.message,
                        attributes=attributes(s.attributes),
                        events=[Event(e.name, e.time_unix_nano, attributes(e.attributes)) for e in s.events],
                        resource=resource,
                        scope=scope,
                        scope_version=scope_version,
                    )
                )
    return out


def log_events_from_request(request: Any) -> DecodedLogs:
    """Turn an ExportLogsServiceRequest into GenAI `LogEvent`s; other records are dropped and counted."""
    out = DecodedLogs()
    dropped = out.dropped
    for resource_logs in request.resource_logs:
        resource = attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                out.received += 1
                attrs = attributes(record.attributes)
                name = record.event_name or attrs.get("event.name") or ""
                if not isinstance(name, str) or not name.startswith("gen_ai."):
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
