"""Reading files offline: protobuf and OTLP JSON exports, logs beside spans, trajectory JSON, console output."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry._logs import LogRecord
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import ConsoleLogRecordExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from otelgrade.core.errors import InputError
from otelgrade.core.spans import LogEvent, Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.tools.offline import read_inputs
from tests.captures import load_folder
from tests.e2e.test_rebuild_captures import differences, find_run
from tests.paths import FIXTURES

FIXTURES = FIXTURES
LOG_SCENARIOS = sorted(p for p in (FIXTURES / "logs").glob("*/*") if p.is_dir() and p.name != "dump")


def dumps(runs: list[Trajectory]) -> list[dict[str, Any]]:
    return sorted((r.model_dump() for r in runs), key=lambda d: (d["trace_id"], d["start_time"], d["span_id"]))


def expected_runs(folder: Path) -> list[dict[str, Any]]:
    expected = json.loads((folder.parent / "expected.json").read_text())
    runs: list[dict[str, Any]] = expected["scenarios"][folder.name]["runs"]
    return runs


def split_logs(folder: Path) -> list[bytes]:
    """Every log record of the scenario as its own ExportLogsServiceRequest."""
    out = []
    for path in sorted(folder.glob("*.logs.pb")):
        request = logs_service_pb2.ExportLogsServiceRequest.FromString(path.read_bytes())
        for rl in request.resource_logs:
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    one = logs_service_pb2.ExportLogsServiceRequest()
                    r = one.resource_logs.add()
                    r.resource.CopyFrom(rl.resource)
                    s = r.scope_logs.add()
                    s.scope.CopyFrom(sl.scope)
                    s.log_records.add().CopyFrom(record)
                    out.append(one.SerializeToString())
    return out


@pytest.mark.parametrize("folder", LOG_SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_logs_before_after_or_split_give_the_same_trajectory(folder: Path, tmp_path: Path) -> None:
    baseline = list(read_inputs([folder]))
    for position, expected in enumerate(expected_runs(folder)):
        assert differences(expected, find_run(expected, baseline, position)) == []
    span_files = sorted(p for p in folder.glob("*.pb") if not p.name.endswith(".logs.pb"))
    pieces = split_logs(folder)
    assert len(pieces) > 1
    for layout in ("before", "after", "interleaved", "reversed"):
        target = tmp_path / layout
        target.mkdir()
        for i, span_file in enumerate(span_files):
            (target / f"{2 * i + 1:04d}.pb").write_bytes(span_file.read_bytes())
        for i, piece in enumerate(reversed(pieces) if layout == "reversed" else pieces):
            order = {"before": i, "after": 9000 + i}.get(layout, 2 * i)
            (target / f"{order:04d}-{i}.logs.pb").write_bytes(piece)
        assert dumps(list(read_inputs([target]))) == dumps(baseline), layout


def test_a_trace_split_over_files_given_one_by_one_is_rebuilt_once() -> None:
    folder = FIXTURES / "traces" / "pydantic-ai-v5" / "two_runs"
    files = sorted(folder.glob("*.pb"))
    assert len(files) > 1
    whole = list(read_inputs([folder]))
    one_by_one = list(read_inputs(list(reversed(files))))
    assert len(whole) == 2 and dumps(whole) == dumps(one_by_one)


def _hex_ids(doc: Any) -> Any:
    """protobuf's JSON mapping writes ids as base64; OTLP JSON writes them as hex."""
    if isinstance(doc, dict):
        return {
            k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") else _hex_ids(v)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [_hex_ids(v) for v in doc]
    return doc


def test_otlp_json_files_and_lines_match_protobuf(tmp_path: Path) -> None:
    folder = FIXTURES / "logs" / "openai-v2-legacy-logs" / "two_runs"
    lines = []
    for i, path in enumerate(sorted(folder.glob("*.pb"))):
        kind = logs_service_pb2.ExportLogsServiceRequest if path.name.endswith(".logs.pb") else None
        request = (kind or trace_service_pb2.ExportTraceServiceRequest).FromString(path.read_bytes())
        doc = _hex_ids(json_format.MessageToDict(request))
        (tmp_path / f"{i:04d}.json").write_text(json.dumps(doc))
        lines.append(json.dumps(doc))
    jsonl = tmp_path / "all" / "export.jsonl"
    jsonl.parent.mkdir()
    jsonl.write_text("\n".join(lines) + "\n")
    from_pb = dumps(list(read_inputs([folder])))
    assert len(from_pb) == 2
    assert dumps(list(read_inputs(sorted(tmp_path.glob("*.json"))))) == from_pb
    assert dumps(list(read_inputs([jsonl]))) == from_pb


@pytest.mark.parametrize("snake_case", [False, True])
def test_protobuf_json_with_base64_ids_is_read_like_the_protobuf(tmp_path: Path, snake_case: bool) -> None:
    """protobuf's own JSON printer writes ids as base64 (OTLP JSON wants hex): such files read the same."""
    folder = FIXTURES / "logs" / "openai-v2-legacy-logs" / "two_runs"
    for i, path in enumerate(sorted(folder.glob("*.pb"))):
        kind = logs_service_pb2.ExportLogsServiceRequest if path.name.endswith(".logs.pb") else None
        request = (kind or trace_service_pb2.ExportTraceServiceRequest).FromString(path.read_bytes())
        (tmp_path / f"{i:04d}.json").write_text(json_format.MessageToJson(request, snake_case))
    assert '"traceId": "' in (tmp_path / "0000.json").read_text() or snake_case
    from_pb = dumps(list(read_inputs([folder])))
    assert len(from_pb) == 2
    assert dumps(list(read_inputs([tmp_path]))) == from_pb


def _readable_span(span: Span) -> ReadableSpan:
    def context(span_id: str) -> SpanContext:
        return SpanContext(int(span.trace_id, 16), int(span_id, 16), False, TraceFlags(TraceFlags.SAMPLED))

    return ReadableSpan(
        name=span.name,
        context=context(span.span_id),
        parent=context(span.parent_id) if span.parent_id else None,
        resource=Resource(span.resource),
        attributes=span.attributes,
        events=[Event(e.name, e.attributes, e.time_ns) for e in span.events],
        kind=SpanKind(max(span.kind - 1, 0)),
        status=Status(StatusCode(span.status_code), span.status_message or None),
        start_time=span.start_ns,
        end_time=span.end_ns,
    )


def _readable_log(log: LogEvent) -> ReadableLogRecord:
    record = LogRecord(
        timestamp=log.event.time_ns,
        observed_timestamp=log.event.time_ns,
        trace_id=int(log.trace_id, 16),
        span_id=int(log.span_id, 16),
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        body=log.event.body,
        attributes=log.event.attributes,
        event_name=log.event.name,
    )
    return ReadableLogRecord(record, Resource(log.resource))


@pytest.mark.parametrize(
    "folder",
    [FIXTURES / "traces" / "pydantic-ai-v5" / "happy", FIXTURES / "logs" / "openai-v2-legacy-logs" / "two_runs"],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_the_sdk_console_exporters_output_is_read(folder: Path, tmp_path: Path) -> None:
    """What `ConsoleSpanExporter` and `ConsoleLogRecordExporter` print (pretty-printed JSON objects one after another,
    ids as 0x-hex) rebuilds the runs the ground truth describes."""
    spans, logs = load_folder(folder)
    out = io.StringIO()
    ConsoleSpanExporter(out=out).export([_readable_span(s) for s in spans])
    ConsoleLogRecordExporter(out=out).export([_readable_log(e) for e in logs])
    printed = tmp_path / "stdout.txt"
    printed.write_text(out.getvalue())
    assert out.getvalue().startswith("{\n") and '"trace_id": "0x' in out.getvalue()
    runs = list(read_inputs([printed]))
    expected = expected_runs(folder)
    assert len(runs) == len(expected)
    for position, run in enumerate(expected):
        assert differences(run, find_run(run, runs, position)) == []


def test_trajectory_json_lines_round_trip(tmp_path: Path) -> None:
    runs = list(read_inputs([FIXTURES / "traces" / "openai-agents-openinference" / "handoff"]))
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in runs))
    again = list(read_inputs([path]))
    assert [r.model_dump() for r in again] == [r.model_dump() for r in runs]
    assert {r.agent_name for r in again} == {"triage_agent", "booking_agent"}


def test_a_source_folder_skips_files_that_are_not_telemetry() -> None:
    runs = list(read_inputs([FIXTURES / "traces" / "traceloop-0.62"]))  # holds expected.json and dump/*.txt
    assert len(runs) == 4


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("broken.pb", b"\xff\xff\xff\xff not protobuf", "broken.pb: not an OTLP protobuf export request"),
        ("broken.json", b'{"resourceSpans": [', "broken.json:1: invalid JSON"),
        ("spans.txt", b'{"name": "a", "context": {}}\nStarting the agent...\n', "spans.txt:2: invalid JSON"),
        (
            "other.json",
            b'{"hello": "world"}',
            "JSON, but not OTLP JSON .* or the OpenTelemetry SDK's console exporter output",
        ),
        ("bad.jsonl", b'{"trace_id": "x", "span_id": "y", "tool_calls": "no"}\n', "not a valid trajectory"),
    ],
)
def test_unreadable_input_names_the_file(tmp_path: Path, name: str, content: bytes, says: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=says) as caught:
        list(read_inputs([path]))
    assert name in str(caught.value) and "logs request" not in str(caught.value)


def test_a_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        list(read_inputs([tmp_path / "nope.pb"]))
