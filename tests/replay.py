"""Replay captured OTLP requests through the OpenTelemetry SDK's own exporters, as an agent would send them.

Each captured request is turned back into SDK `ReadableSpan`s / `ReadableLogRecord`s and
exported with `OTLPSpanExporter` / `OTLPLogExporter` (gRPC or HTTP), so what reaches the server
was encoded by the real client libraries.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from opentelemetry._logs import LogRecord
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from otelgrade.core.spans import any_value, attributes

_KINDS = {
    0: SpanKind.INTERNAL,
    1: SpanKind.INTERNAL,
    2: SpanKind.SERVER,
    3: SpanKind.CLIENT,
    4: SpanKind.PRODUCER,
    5: SpanKind.CONSUMER,
}
_STATUS = {0: StatusCode.UNSET, 1: StatusCode.OK, 2: StatusCode.ERROR}


def _context(trace_id: bytes, span_id: bytes) -> SpanContext:
    return SpanContext(
        int.from_bytes(trace_id, "big"),
        int.from_bytes(span_id, "big"),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )


def sdk_spans(body: bytes) -> list[ReadableSpan]:
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    out = []
    for rs in request.resource_spans:
        resource = Resource(attributes(rs.resource.attributes))
        for ss in rs.scope_spans:
            scope = InstrumentationScope(ss.scope.name, ss.scope.version or None)
            for s in ss.spans:
                status = _STATUS[s.status.code]
                out.append(
                    ReadableSpan(
                        name=s.name,
                        context=_context(s.trace_id, s.span_id),
                        parent=_context(s.trace_id, s.parent_span_id) if s.parent_span_id else None,
                        resource=resource,
                        attributes=attributes(s.attributes),
                        events=[Event(e.name, attributes(e.attributes), e.time_unix_nano) for e in s.events],
                        kind=_KINDS[s.kind],
                        status=Status(status, s.status.message or None)
                        if status == StatusCode.ERROR
                        else Status(status),
                        start_time=s.start_time_unix_nano,
                        end_time=s.end_time_unix_nano,
                        instrumentation_scope=scope,
                    )
                )
    return out


def sdk_log_records(body: bytes) -> list[ReadableLogRecord]:
    request = logs_service_pb2.ExportLogsServiceRequest.FromString(body)
    out = []
    for rl in request.resource_logs:
        resource = Resource(attributes(rl.resource.attributes))
        for sl in rl.scope_logs:
            scope = InstrumentationScope(sl.scope.name, sl.scope.version or None)
            for r in sl.log_records:
                record = LogRecord(
                    timestamp=r.time_unix_nano or None,
                    observed_timestamp=r.observed_time_unix_nano or None,
                    trace_id=int.from_bytes(r.trace_id, "big"),
                    span_id=int.from_bytes(r.span_id, "big"),
                    trace_flags=TraceFlags(TraceFlags.SAMPLED),
                    body=any_value(r.body) if r.HasField("body") else None,
                    attributes=attributes(r.attributes),
                    event_name=r.event_name or None,
                )
                out.append(ReadableLogRecord(record, resource, scope))
    return out


def exporters(protocol: str, grpc_address: str, http_base: str) -> tuple[Any, Any]:
    """A span exporter and a log exporter for `grpc` or `http` (protobuf)."""
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans

        return GrpcSpans(endpoint=grpc_address, insecure=True), GrpcLogs(endpoint=grpc_address, insecure=True)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans

    return HttpSpans(endpoint=f"{http_base}/v1/traces"), HttpLogs(endpoint=f"{http_base}/v1/logs")


def replay_folder(folder: Path, span_exporter: Any, log_exporter: Any) -> int:
    """Export every request of one captured scenario, in arrival order; returns spans sent."""
    sent = 0
    for path in sorted(folder.rglob("*.pb")):
        body = path.read_bytes()
        if path.name.endswith(".logs.pb"):
            result = log_exporter.export(sdk_log_records(body))
        else:
            spans = sdk_spans(body)
            sent += len(spans)
            result = span_exporter.export(spans)
        assert result.name == "SUCCESS", f"export of {path} failed: {result}"
    return sent


def grade_offline(config_path: Path, inputs: list[Path]) -> list[dict[str, Any]]:
    """`otelgrade grade --format json` on the same files, as a CI job would run it: one dict per grade."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "otelgrade",
            "grade",
            "--config",
            str(config_path),
            "--format",
            "json",
            *map(str, inputs),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode in (0, 1), result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]
