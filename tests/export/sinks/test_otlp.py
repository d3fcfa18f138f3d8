"""The OTLP sink: grades arrive at a real OTLP receiver as `gen_ai.evaluation.result` events on the graded trace."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as ts
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as ts_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.export.sinks import read_sink
from otelgrade.export.sinks.otlp import OtlpSink
from tests.conftest import ServeProcess


class Received:
    """Spans a test receiver got, with the resource attributes they came with."""

    def __init__(self) -> None:
        self.spans: list[tuple[dict[str, object], Span]] = []
        self.cond = threading.Condition()

    def add(self, request: ts.ExportTraceServiceRequest) -> None:
        with self.cond:
            for rs in request.resource_spans:
                resource = attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    self.spans.extend((resource, s) for s in ss.spans)
            self.cond.notify_all()

    def wait_for(self, n: int, timeout: float = 10.0) -> list[tuple[dict[str, object], Span]]:
        with self.cond:
            self.cond.wait_for(lambda: len(self.spans) >= n, timeout)
            return list(self.spans)


def value(v: AnyValue) -> object:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def attrs(kvs: list[KeyValue]) -> dict[str, object]:
    return {kv.key: value(kv.value) for kv in kvs}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def grpc_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Service(ts_grpc.TraceServiceServicer):
        def Export(self, request, context):
            received.add(request)
            return ts.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    ts_grpc.add_TraceServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", received
    server.stop(grace=None)


@pytest.fixture
def http_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path == "/v1/traces" and self.headers["Content-Type"] == "application/x-protobuf":
                received.add(ts.ExportTraceServiceRequest.FromString(body))
                self.send_response(200)
            else:
                self.send_response(404)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()


def grade(trace: int, grader: str, outcome: str, score: float | None, rationale: str = "") -> Grade:
    return Grade(
        trace_id=f"{trace:032x}",
        span_id=f"{trace + 0xABC:016x}",
        suite="booking",
        grader=grader,
        score=score,
        passed=outcome == "pass",
        outcome=outcome,
        rationale=rationale,
        grader_type="max_tool_calls",
        agent_name="booker",
        service_name="booking-agent",
        time_unix=time.time(),
    )


def events_by_grader(span: Span) -> dict[str, dict[str, object]]:
    found = {}
    for event in span.events:
        assert event.name == "gen_ai.evaluation.result"
        a = attrs(event.attributes)
        found[str(a["gen_ai.evaluation.name"])] = a
    return found


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_grades_reach_the_receiver_attached_to_the_graded_run(transport: str, request: pytest.FixtureRequest) -> None:
    endpoint, received = request.getfixturevalue(f"{transport}_receiver")
    sink = OtlpSink(endpoint, Metrics())
    run_a = [
        grade(0x1F, "safe", "pass", 1.0, "no forbidden tool called"),
        grade(0x1F, "efficient", "fail", 0.0, "12 tool calls > 10"),
    ]
    run_b = [grade(0x2E, "helpful", "error", None, "judge timed out")]
    sink.write(run_a)
    sink.write(run_b)
    sink.flush()
    spans = received.wait_for(2)
    sink.close()

    assert len(spans) == 2
    by_trace = {s.trace_id.hex(): (resource, s) for resource, s in spans}
    assert set(by_trace) == {run_a[0].trace_id, run_b[0].trace_id}

    resource, span_a = by_trace[run_a[0].trace_id]
    assert resource["service.name"] == "otelgrade"
    assert span_a.parent_span_id.hex() == run_a[0].span_id  # a child of the run's root span
    assert span_a.span_id.hex() != run_a[0].span_id
    events = events_by_grader(span_a)
    assert set(events) == {"safe", "efficient"}
    assert events["safe"]["gen_ai.evaluation.score.value"] == 1.0
    assert events["safe"]["gen_ai.evaluation.score.label"] == "pass"
    assert events["safe"]["gen_ai.evaluation.explanation"] == "no forbidden tool called"
    assert events["efficient"]["gen_ai.evaluation.score.value"] == 0.0
    assert events["efficient"]["gen_ai.evaluation.score.label"] == "fail"
    assert events["efficient"]["otelgrade.suite"] == "booking"
    assert "error.type" not in events["efficient"]

    _, span_b = by_trace[run_b[0].trace_id]
    assert span_b.parent_span_id.hex() == run_b[0].span_id
    (helpful,) = events_by_grader(span_b).values()
    assert helpful["gen_ai.evaluation.score.label"] == "error"
    assert "gen_ai.evaluation.score.value" not in helpful  # no score is not a zero score
    assert "error.type" in helpful


def test_a_configured_otlp_sink_picks_the_exporter_from_the_endpoint(
    grpc_receiver: tuple[str, Received], http_receiver: tuple[str, Received]
) -> None:
    (grpc_endpoint, via_grpc), (http_endpoint, via_http) = grpc_receiver, http_receiver
    sinks = [read_sink({"type": "otlp", "endpoint": e}).build(Metrics()) for e in (grpc_endpoint, http_endpoint)]
    for sink in sinks:
        sink.write([grade(0x77, "safe", "pass", 1.0)])
    for sink in sinks:
        sink.close()  # close flushes what is queued
    for received in (via_grpc, via_http):
        ((_, span),) = received.wait_for(1, timeout=1)
        assert span.trace_id.hex() == f"{0x77:032x}"


def test_invalid_ids_and_unreachable_endpoints_are_counted_not_raised(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")
    metrics = Metrics()
    sink = OtlpSink(f"http://127.0.0.1:{free_port()}", metrics, schedule_delay_millis=50)
    bad = grade(1, "safe", "pass", 1.0)
    bad.trace_id = "not-hex"
    with caplog.at_level(logging.ERROR, logger="otelgrade.export.sinks"):
        sink.write([bad])
        assert metrics.registry.get_sample_value("otelgrade_sink_errors_total", {"sink": "otlp"}) == 1
        sink.write([grade(2, "safe", "pass", 1.0), grade(2, "efficient", "fail", 0.0)])
        sink.close()
    assert metrics.registry.get_sample_value("otelgrade_sink_errors_total", {"sink": "otlp"}) == 3
    assert len([r for r in caplog.records if r.name == "otelgrade.export.sinks"]) == 1


def test_otelgrade_serve_sends_its_grades_back_onto_the_graded_trace(
    serve: Callable[..., ServeProcess], grpc_receiver: tuple[str, Received], tmp_path: Path
) -> None:
    endpoint, received = grpc_receiver
    grades_path = tmp_path / "grades.jsonl"
    suite = {
        "name": "weather",
        "graders": [
            {"name": "used_weather", "type": "tools_called", "tools": ["get_weather"]},
            {"name": "never_weather", "type": "tools_not_called", "tools": ["get_weather"]},
        ],
    }
    sinks = [{"type": "jsonl", "path": str(grades_path)}, {"type": "otlp", "endpoint": endpoint}]
    server = serve({"suites": [suite], "sinks": sinks})

    provider = TracerProvider(resource=Resource({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.grpc_address, insecure=True)))
    tracer = provider.get_tracer("weather.agent")
    with tracer.start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ) as root:
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1"}
        with tracer.start_as_current_span("execute_tool get_weather", attributes=tool):
            pass
    provider.shutdown()
    trace_id, root_id = f"{root.get_span_context().trace_id:032x}", f"{root.get_span_context().span_id:016x}"

    ((resource, span),) = received.wait_for(1, timeout=15)
    assert server.stop() == 0
    assert resource["service.name"] == "otelgrade"
    assert (span.trace_id.hex(), span.parent_span_id.hex()) == (trace_id, root_id)
    labels = {name: a["gen_ai.evaluation.score.label"] for name, a in events_by_grader(span).items()}
    assert labels == {"used_weather": "pass", "never_weather": "fail"}
    written = [json.loads(line) for line in grades_path.read_text().splitlines()]
    assert {(g["trace_id"], g["span_id"], g["grader"], g["outcome"]) for g in written} == {
        (trace_id, root_id, name, label) for name, label in labels.items()
    }
