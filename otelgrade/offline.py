"""Read trajectories from files: OTLP protobuf or JSON exports, or trajectory JSON lines.

The same decoder and rebuild functions as the live server: spans and log events of all the
files given are grouped by trace id, then each trace is rebuilt once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from otelgrade.decode import DecodeError, decode_logs, decode_traces, sniff_signal
from otelgrade.errors import InputError
from otelgrade.rebuild import rebuild
from otelgrade.spans import LogEvent, Span
from otelgrade.trajectory import Trajectory

_SUFFIXES = (".pb", ".json", ".jsonl")
_TRAJECTORY_KEYS = ("trace_id", "span_id")


class _Collected:
    def __init__(self) -> None:
        self.spans: dict[str, list[Span]] = {}
        self.logs: dict[str, list[LogEvent]] = {}
        self.trajectories: list[Trajectory] = []

    def add_spans(self, spans: list[Span]) -> None:
        for span in spans:
            self.spans.setdefault(span.trace_id, []).append(span)

    def add_logs(self, events: list[LogEvent]) -> None:
        for event in events:
            self.logs.setdefault(event.trace_id, []).append(event)


def read_inputs(paths: Sequence[str | Path]) -> Iterator[Trajectory]:
    """Files or directories: OTLP protobuf `*.pb` (ExportTraceServiceRequest), `*.logs.pb`
    (ExportLogsServiceRequest), OTLP JSON `*.json`/`*.jsonl` (traces or logs, one request per file
    or per line), and trajectory JSON (objects as printed by `otelgrade trajectories`, one per line,
    recognised by having `trace_id` + `span_id` + `tool_calls`/`llm_calls` keys). Spans and logs of
    all files given are grouped by trace id before rebuilding (a trace is split over many files).
    Raises otelgrade.errors.InputError naming the file for unreadable input."""
    collected = _Collected()
    for path, explicit in _files(paths):
        _read_file(path, explicit, collected)
    yield from collected.trajectories
    for trace_id, spans in collected.spans.items():
        yield from rebuild(spans, collected.logs.get(trace_id, ()))


def _files(paths: Sequence[str | Path]) -> Iterator[tuple[Path, bool]]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.name.endswith(_SUFFIXES):
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
    try:
        if path.name.endswith(".logs.pb"):
            out.add_logs(decode_logs(body).events)
        elif path.suffix == ".pb" or (
            explicit and path.suffix not in (".json", ".jsonl") and not _looks_like_json(body)
        ):
            if sniff_signal(body, "protobuf") == "logs":
                out.add_logs(decode_logs(body).events)
            else:
                out.add_spans(decode_traces(body).spans)
        else:
            _read_json(path, body, explicit, out)
    except DecodeError as exc:
        raise InputError(f"{path}: {exc}") from exc


def _looks_like_json(body: bytes) -> bool:
    return body.lstrip()[:1] in (b"{", b"[")


def _read_json(path: Path, body: bytes, explicit: bool, out: _Collected) -> None:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 JSON: {exc}") from exc
    try:
        documents: list[tuple[int, Any]] = [(0, json.loads(text))]
    except ValueError:
        documents = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                documents.append((number, json.loads(line)))
            except ValueError as exc:
                raise InputError(f"{path}:{number}: invalid JSON: {exc}") from exc
    recognised = False
    for number, doc in documents:
        for item in doc if isinstance(doc, list) else [doc]:
            recognised |= _read_document(path, number, item, out)
    if explicit and not recognised and documents:
        raise InputError(f"{path}: neither OTLP JSON (resourceSpans/resourceLogs) nor trajectory JSON")


def _read_document(path: Path, number: int, doc: Any, out: _Collected) -> bool:
    where = f"{path}:{number}" if number else str(path)
    if not isinstance(doc, dict):
        return False
    if "resourceSpans" in doc or "resourceLogs" in doc:
        raw = json.dumps(doc).encode()
        try:
            if "resourceLogs" in doc:
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
