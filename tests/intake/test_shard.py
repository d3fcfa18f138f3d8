"""Splitting an export request among grading workers: every span's bytes reach the worker owning its trace,
unchanged, with its resource and scope; nothing is lost or duplicated."""

from __future__ import annotations

import pytest
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from otelgrade.intake.decode import decode_logs, decode_traces
from otelgrade.intake.shard import ShardError, owner, split


def sdk_request(runs: int) -> bytes:
    """`runs` traces of three spans each, from two services, encoded by the SDK's own OTLP encoder."""
    memory = InMemorySpanExporter()
    for service in ("planner", "booker"):
        provider = TracerProvider(resource=Resource({"service.name": service}))
        provider.add_span_processor(SimpleSpanProcessor(memory))
        tracer = provider.get_tracer(f"{service}.scope", "1.2")
        for _ in range(runs):
            with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}):
                with tracer.start_as_current_span("chat", attributes={"gen_ai.request.model": "m"}):
                    pass
                with tracer.start_as_current_span("execute_tool", attributes={"gen_ai.tool.name": "lookup"}):
                    pass
    return bytes(encode_spans(memory.get_finished_spans()).SerializeToString())


def raw_spans(body: bytes) -> list[tuple[bytes, str, str]]:
    """Each span's bytes as the request carries them, with its service and scope."""
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    return [
        (span.SerializeToString(), str(rs.resource.attributes[0].value.string_value), ss.scope.name)
        for rs in request.resource_spans
        for ss in rs.scope_spans
        for span in ss.spans
    ]


def test_every_span_reaches_the_worker_owning_its_trace_once_and_unchanged() -> None:
    body = sdk_request(40)
    parts = split(body, "traces", 3)
    assert sorted(parts) == [0, 1, 2]  # 80 traces: every worker owns some
    everywhere = [span for part in parts.values() for span in raw_spans(part)]
    assert sorted(everywhere) == sorted(raw_spans(body))
    traces_seen: dict[str, int] = {}
    for worker, part in parts.items():
        for span in decode_traces(part).spans:
            assert owner(bytes.fromhex(span.trace_id), 3) == worker
            assert traces_seen.setdefault(span.trace_id, worker) == worker
    assert len(traces_seen) == 80


def test_the_receiving_process_owns_nothing_with_one_worker() -> None:
    body = sdk_request(2)
    assert split(body, "traces", 1) == {0: body}


def test_a_span_whose_trace_id_is_not_written_first_is_routed_by_it() -> None:
    trace_id = bytes(range(1, 17))
    span = SpanMessage(span_id=b"\1" * 8, name="late id")
    written = span.SerializeToString() + SpanMessage(trace_id=trace_id).SerializeToString()  # fields in any order
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.add().MergeFromString(written)
    body = request.SerializeToString()
    assert list(split(body, "traces", 5)) == [owner(trace_id, 5)]


def test_log_records_follow_their_trace() -> None:
    resource, scope = Resource({"service.name": "planner"}), InstrumentationScope("planner.events")
    records = [
        ReadableLogRecord(
            LogRecord(
                trace_id=n * 7919,
                span_id=n,
                severity_number=SeverityNumber.INFO,
                body={"content": f"turn {n}"},
                attributes={"event.name": "gen_ai.user.message"},
            ),
            resource,
            scope,
        )
        for n in range(1, 31)
    ]
    body = bytes(encode_logs(records).SerializeToString())
    parts = split(body, "logs", 2)
    assert sum(len(decode_logs(p).events) for p in parts.values()) == 30
    for worker, part in parts.items():
        assert all(owner(bytes.fromhex(e.trace_id), 2) == worker for e in decode_logs(part).events)
    assert logs_service_pb2.ExportLogsServiceRequest.FromString(parts[0]).resource_logs[0].resource.attributes


def test_bytes_that_are_not_a_request_are_refused() -> None:
    with pytest.raises(ShardError):
        split(b"\xff\xff\xff not protobuf", "traces", 2)


def test_a_resource_one_worker_owns_is_handed_on_byte_for_byte() -> None:
    """A resource whose spans are all one trace's reaches its worker as the sender encoded it, fields in the
    sender's order (not serialized again), beside resources that are split span by span."""
    one_trace = trace_service_pb2.ExportTraceServiceRequest.FromString(sdk_request(1))
    resource = one_trace.resource_spans[0]
    # the sender's own order: schema_url (3) first, then the scopes (2), then the resource (1)
    fields = [
        b"\x1a\x07v1.test",
        *(b"\x12" + _varint(len(s := ss.SerializeToString())) + s for ss in resource.scope_spans),
        b"\x0a" + _varint(len(r := resource.resource.SerializeToString())) + r,
    ]
    sent = b"".join(fields)
    whole = b"\x0a" + _varint(len(sent)) + sent
    mixed = sdk_request(20)  # many traces per resource: split span by span
    parts = split(whole + mixed, "traces", 2)
    worker = owner(resource.scope_spans[0].spans[0].trace_id, 2)
    assert parts[worker].startswith(whole)
    assert decode_traces(parts[worker]).spans[0].resource == {"service.name": "planner"}
    everywhere = sorted(span for part in parts.values() for span in raw_spans(part))
    assert everywhere == sorted(raw_spans(whole + mixed))


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes([*out, n])
