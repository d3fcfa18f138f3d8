"""Read trajectories from files: OTLP protobuf or JSON exports, trajectory JSON lines, or what the
OpenTelemetry SDK's console exporters print.

The same decoder and rebuild functions as the live server: spans and log events of all the
files given are grouped by trace id, then each trace is rebuilt once.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from otelgrade.core.errors import InputError
from otelgrade.core.spans import AnySpan, LogEvent
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.grading import without_span_ground_truth
from otelgrade.intake.decode import DecodeError, decode_logs, decode_traces, sniff_signal
from otelgrade.rebuild import rebuild_grouped
from otelgrade.rebuild.dialect import Dialect

log = logging.getLogger("otelgrade")

_PLAIN_SUFFIXES = (".pb", ".json", ".jsonl")
_SUFFIXES = (*_PLAIN_SUFFIXES, *(suffix + ".gz" for suffix in _PLAIN_SUFFIXES))
_TRAJECTORY_KEYS = ("trace_id", "span_id")
_JSON_KINDS = (
    "OTLP JSON (resourceSpans/resourceLogs), trajectory JSON or the OpenTelemetry SDK's console exporter output"
)
_NEXT_VALUE = re.compile(r"\S")
# OTLP JSON requests; protobuf's JSON printer writes the snake_case names with `preserving_proto_field_name`.
_REQUEST_KEYS = {"resourceSpans": "traces", "resource_spans": "traces", "resourceLogs": "logs", "resource_logs": "logs"}


class _Collected:
    def __init__(self) -> None:
        self.spans: dict[str, list[AnySpan]] = {}
        self.logs: dict[str, list[LogEvent]] = {}
        self.trajectories: list[Trajectory] = []

    def add_spans(self, spans: Sequence[AnySpan]) -> None:
        for span in spans:
            self.spans.setdefault(span.trace_id, []).append(span)

    def add_logs(self, events: list[LogEvent]) -> None:
        for event in events:
            self.logs.setdefault(event.trace_id, []).append(event)


def read_inputs(
    paths: Sequence[str | Path],
    dialects: Sequence[Dialect] = (),
    span_ground_truth: bool = True,
    modified_after: float | None = None,
    id_attributes: Sequence[str] = (),
) -> Iterator[Trajectory]:
    """Files or directories: OTLP protobuf `*.pb` (ExportTraceServiceRequest), `*.logs.pb`
    (ExportLogsServiceRequest), OTLP JSON `*.json`/`*.jsonl` (traces or logs, one request per file
    or per line), and trajectory JSON (objects as printed by `otelgrade trajectories`, one per line,
    recognised by having `trace_id` + `span_id` + `tool_calls`/`llm_calls` keys). Spans and logs of
    all files given are grouped by trace id before rebuilding (a trace is split over many files).
    Also what the Python SDK's ConsoleSpanExporter and ConsoleLogRecordExporter print (JSON objects one after
    another, ids as 0x-hex). Without `span_ground_truth`, runs rebuilt from spans drop the ground truth their spans
    set (`rebuild.ground_truth_from_spans`). Any of these gzip-compressed (`*.pb.gz`, ...: the traffic archive's
    files) is read too. `modified_after` (a Unix time) skips the files in directories last written before it.
    `id_attributes` (`conversations.id_attributes`) name each run's conversation before the conventions' ids.
    Raises otelgrade.core.errors.InputError naming the file for unreadable input."""

    def rebuild(spans: Sequence[AnySpan], logs: Sequence[LogEvent]) -> list[Trajectory]:
        runs = rebuild_grouped(spans, logs, dialects, id_attributes)
        return [without_span_ground_truth(t, span_ground_truth) for t in runs]

    return read_runs(paths, rebuild, modified_after)


RebuildTrace = Callable[[Sequence[AnySpan], Sequence[LogEvent]], list[Trajectory]]


def read_runs(
    paths: Sequence[str | Path], rebuild: RebuildTrace, modified_after: float | None = None
) -> Iterator[Trajectory]:
    """The runs in the files as `read_inputs` finds them, each trace (its spans grouped by trace id) rebuilt by
    `rebuild` (a config's `pipeline.TraceReader`)."""
    collected = _collect(paths, modified_after)
    yield from collected.trajectories
    for trace_id, spans in collected.spans.items():
        yield from rebuild(spans, collected.logs.get(trace_id, ()))


def read_spans(paths: Sequence[str | Path]) -> dict[str, tuple[list[AnySpan], list[LogEvent]]]:
    """The spans and GenAI log events in the files, by trace id (trajectory JSON has none)."""
    collected = _collect(paths)
    return {trace_id: (spans, collected.logs.get(trace_id, [])) for trace_id, spans in collected.spans.items()}


def _collect(paths: Sequence[str | Path], modified_after: float | None = None) -> _Collected:
    collected = _Collected()
    for path, explicit in _files(paths, modified_after):
        _read_file(path, explicit, collected)
    return collected


def _files(paths: Sequence[str | Path], modified_after: float | None = None) -> Iterator[tuple[Path, bool]]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                wanted = child.is_file() and child.name.endswith(_SUFFIXES)
                if wanted and (modified_after is None or child.stat().st_mtime >= modified_after):
                    yield child, False
        elif path.is_file():
            yield path, True
        else:
            raise InputError(f"{path}: no such file or directory")


def _read_file(path: Path, explicit: bool, out: _Collected) -> None:
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    name = path
    if path.suffix == ".gz" or body[:2] == b"\x1f\x8b":
        body, name = _gunzip(path, body), path.with_suffix("") if path.suffix == ".gz" else path
    if name.suffix == ".pb" or (explicit and name.suffix not in (".json", ".jsonl") and not _looks_like_json(body)):
        _read_protobuf(name, body, out)
    else:
        _read_json(name, body, explicit, out)


def _gunzip(path: Path, body: bytes) -> bytes:
    """A gzip file's content, every member of it (the archive appends one per trace). A last member cut short (the
    writer stopped mid-write) is left out, with a warning."""
    parts: list[bytes] = []
    while body:
        member = zlib.decompressobj(wbits=31)
        try:
            parts.append(member.decompress(body))
        except zlib.error as exc:
            raise InputError(f"{path}: damaged gzip data after {sum(map(len, parts))} bytes: {exc}") from exc
        if not member.eof:
            parts.pop()
            log.warning("%s: the last gzip member is cut short (a write stopped midway); read what precedes it", path)
            break
        body = member.unused_data
    return b"".join(parts)


def _read_protobuf(path: Path, body: bytes, out: _Collected) -> None:
    """One ExportTraceServiceRequest, or ExportLogsServiceRequest (`*.logs.pb`, or as its content says)."""
    try:
        if path.name.endswith(".logs.pb") or sniff_signal(body, "protobuf") == "logs":
            out.add_logs(decode_logs(body).events)
        else:
            out.add_spans(decode_traces(body).spans)
    except DecodeError as exc:
        raise InputError(
            f"{path}: not an OTLP protobuf export request (the body of an ExportTraceServiceRequest or "
            "ExportLogsServiceRequest, as OTLP exporters send it), or a damaged one; otelgrade reads those, "
            + _JSON_KINDS
        ) from exc


def _looks_like_json(body: bytes) -> bool:
    return body.lstrip()[:1] in (b"{", b"[")


def _read_json(path: Path, body: bytes, explicit: bool, out: _Collected) -> None:
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 JSON: {exc}") from exc
    recognised = seen = False
    for number, doc in _json_values(path, text):
        seen = True
        for item in doc if isinstance(doc, list) else [doc]:
            recognised |= _read_document(path, number, item, out)
    if explicit and seen and not recognised:
        raise InputError(f"{path}: JSON, but not {_JSON_KINDS}")


def _json_values(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """Each JSON value in `text` and the line it starts on: one document, JSON lines, or pretty-printed objects
    one after another (as the SDK's console exporters print them)."""
    decoder = json.JSONDecoder()
    position, line = 0, 1
    while (found := _NEXT_VALUE.search(text, position)) is not None:
        line += text.count("\n", position, found.start())
        try:
            value, position = decoder.raw_decode(text, found.start())
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        yield line, value
        line += text.count("\n", found.start(), position)


def _read_document(path: Path, number: int, doc: Any, out: _Collected) -> bool:
    where = f"{path}:{number}"
    if not isinstance(doc, dict):
        return False
    try:
        doc = _from_console(doc)
    except ValueError as exc:
        raise InputError(f"{where}: a console exporter's span or log record, but unreadable: {exc}") from exc
    signal = next((signal for key, signal in _REQUEST_KEYS.items() if key in doc), None)
    if signal is not None:
        raw = json.dumps(doc).encode()
        try:
            if signal == "logs":
                out.add_logs(decode_logs(raw, "json").events)
            else:
                out.add_spans(decode_traces(raw, "json").spans)
        except DecodeError as exc:
            raise InputError(f"{where}: {exc}") from exc
        return True
    if all(k in doc for k in _TRAJECTORY_KEYS) and ("tool_calls" in doc or "llm_calls" in doc):
        try:
            out.trajectories.append(Trajectory.model_validate(doc))
        except ValidationError as exc:
            raise InputError(f"{where}: not a valid trajectory: {exc.errors()[0].get('msg', exc)}") from exc
        return True
    return False


# --- the Python SDK's console exporters: ReadableSpan.to_json / ReadableLogRecord.to_json -------------------

_KINDS = {f"SpanKind.{k}": i for i, k in enumerate(("INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"), 1)}
_STATUS_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _from_console(doc: dict[str, Any]) -> dict[str, Any]:
    """A span or log record as the console exporters print it, as the OTLP JSON request that carries it;
    any other document as it is."""
    resource = {"attributes": _key_values((doc.get("resource") or {}).get("attributes"))}
    context = doc.get("context")
    if isinstance(context, dict) and "trace_id" in context and "name" in doc:
        status = doc.get("status") or {}
        span = {
            "traceId": _hex(context.get("trace_id")),
            "spanId": _hex(context.get("span_id")),
            "parentSpanId": _hex(doc.get("parent_id")),
            "name": doc["name"],
            "kind": _KINDS.get(str(doc.get("kind")), 0),
            "startTimeUnixNano": _nanos(doc.get("start_time")),
            "endTimeUnixNano": _nanos(doc.get("end_time")),
            "status": {
                "code": _STATUS_CODES.get(str(status.get("status_code")), 0),
                "message": status.get("description"),
            },
            "attributes": _key_values(doc.get("attributes")),
            "events": [
                {
                    "name": e.get("name"),
                    "timeUnixNano": _nanos(e.get("timestamp")),
                    "attributes": _key_values(e.get("attributes")),
                }
                for e in doc.get("events") or []
            ],
        }
        return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    if "observed_timestamp" in doc and "trace_id" in doc and "body" in doc:
        record = {
            "timeUnixNano": _nanos(doc.get("timestamp")),
            "observedTimeUnixNano": _nanos(doc.get("observed_timestamp")),
            "severityNumber": doc.get("severity_number") or 0,
            "severityText": doc.get("severity_text") or "",
            "body": _any_value(doc.get("body")),
            "attributes": _key_values(doc.get("attributes")),
            "traceId": _hex(doc.get("trace_id")),
            "spanId": _hex(doc.get("span_id")),
            "eventName": doc.get("event_name") or "",
        }
        return {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]}
    return doc


def _hex(value: Any) -> str:
    return value.removeprefix("0x") if isinstance(value, str) else ""


def _nanos(iso: Any) -> str:
    """`2025-01-02T03:04:05.123456Z` (what the SDK prints) -> nanoseconds since the epoch, as OTLP JSON writes them."""
    if not isinstance(iso, str):
        return "0"
    moment = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return str((moment - _EPOCH) // timedelta(microseconds=1) * 1000)


def _key_values(attributes: Any) -> list[dict[str, Any]]:
    items = attributes.items() if isinstance(attributes, dict) else ()
    return [{"key": str(key), "value": _any_value(value)} for key, value in items]


def _any_value(value: Any) -> dict[str, Any]:
    """A JSON value as an OTLP JSON AnyValue."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _key_values(value)}}
    return {} if value is None else {"stringValue": str(value)}
