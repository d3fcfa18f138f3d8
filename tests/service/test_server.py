"""`otelgrade serve` as a user runs it: a subprocess on free ports, fed by the OpenTelemetry SDK's own
OTLP exporters, observed through /metrics and the JSONL grades it writes."""

from __future__ import annotations

import http.client
import json
import signal
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import ServeProcess
from tests.fake_openai import FakeOpenAI, Reply
from tests.paths import FIXTURES
from tests.receivers_harness import otlp_json, sid, span_pb, traces_request
from tests.replay import exporters, replay_folder

Serve = Callable[..., ServeProcess]
FIXTURES = FIXTURES

WEATHER_SUITE = {
    "name": "weather",
    "match": {"service.name": "weather-agent"},
    "graders": [
        {"name": "used_weather", "type": "tools_called", "tools": ["get_weather"]},
        {"name": "never_weather", "type": "tools_not_called", "tools": ["get_weather"]},
    ],
}


def agent_run(exporter: SpanExporter, batch: bool = True) -> str:
    """One GenAI-convention agent run (agent, chat, tool spans) exported by the SDK; returns its trace id."""
    provider = TracerProvider(resource=Resource({"service.name": "weather-agent"}))
    processor = BatchSpanProcessor(exporter, schedule_delay_millis=20) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("weather.agent")
    agent_attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}
    with tracer.start_as_current_span("invoke_agent weather", attributes=agent_attrs) as root:
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.provider.name": "openai",
        }
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes=chat):
            pass
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"city": "Paris"}',
            "gen_ai.tool.call.result": "sunny",
        }
        with tracer.start_as_current_span("execute_tool get_weather", attributes=tool):
            pass
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes=chat):
            pass
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.force_flush()
    provider.shutdown()
    return trace_id


def grades_by_trace(server: ServeProcess) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for grade in server.grades():
        out.setdefault(grade["trace_id"], {})[grade["grader"]] = grade["outcome"]
    return out


def test_sdk_exporters_over_grpc_http_and_json(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE]})
    over_grpc = agent_run(GrpcSpanExporter(endpoint=server.grpc_address, insecure=True))
    over_http = agent_run(HttpSpanExporter(endpoint=f"{server.http_url}/v1/traces"))
    memory = InMemorySpanExporter()
    over_json = agent_run(memory, batch=False)
    body = otlp_json(encode_spans(memory.get_finished_spans()).SerializeToString())
    request = urllib.request.Request(
        f"{server.http_url}/v1/traces", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200 and response.headers["Content-Type"] == "application/json"

    server.wait_for_metric("otelgrade_traces_completed_total", {"reason": "complete"}, 3)
    assert server.metric("otelgrade_spans_received_total", {"protocol": "grpc"}) == 4
    assert server.metric("otelgrade_spans_received_total", {"protocol": "http"}) == 8
    server.wait_for_metric("otelgrade_grades_total", {"suite": "weather", "grader": "used_weather"}, 3)
    assert server.metric("otelgrade_grades_total", {"grader": "used_weather", "outcome": "pass"}) == 3
    assert server.metric("otelgrade_grades_total", {"grader": "never_weather", "outcome": "fail"}) == 3
    assert server.metric("otelgrade_traces_in_flight") == 0
    assert server.stop() == 0
    expected = {"used_weather": "pass", "never_weather": "fail"}
    assert grades_by_trace(server) == {over_grpc: expected, over_http: expected, over_json: expected}
    assert {g["agent_name"] for g in server.grades()} == {"weather"}


def test_genai_log_events_sent_with_the_sdk_log_exporter_reach_the_run(serve: Serve) -> None:
    folder = FIXTURES / "logs" / "openai-v2-legacy-logs"
    expected = json.loads((folder / "expected.json").read_text())["scenarios"]
    happy, tool_error = (expected[name]["runs"][0] for name in ("happy", "tool_error"))
    graders = [
        {"name": "happy_output", "type": "output_contains", "values": [happy["output"]]},
        {"name": "tool_error_output", "type": "output_contains", "values": [tool_error["output"]]},
    ]
    server = serve({"suites": [{"name": "logs", "graders": graders}]})
    replay_folder(folder / "happy", *exporters("grpc", server.grpc_address, server.http_url))
    replay_folder(folder / "tool_error", *exporters("http", server.grpc_address, server.http_url))

    def records(scenario: str) -> int:
        return sum(
            len(scope.log_records)
            for path in (folder / scenario).glob("*.logs.pb")
            for resource in logs_service_pb2.ExportLogsServiceRequest.FromString(path.read_bytes()).resource_logs
            for scope in resource.scope_logs
        )

    assert server.metric("otelgrade_log_records_received_total", {"protocol": "grpc"}) == records("happy")
    assert server.metric("otelgrade_log_records_received_total", {"protocol": "http"}) == records("tool_error")
    server.wait_for_metric("otelgrade_runs_graded_total", {"suite": "logs"}, 2)
    assert server.stop() == 0
    grades = grades_by_trace(server)
    assert grades[happy["trace_id"]]["happy_output"] == "pass"
    assert grades[tool_error["trace_id"]]["tool_error_output"] == "pass"


def test_bad_input_is_answered_and_the_server_keeps_grading(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE], "receivers": {"max_request_bytes": 100_000}})
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    for body, content_type, status in [
        (b"\x0a\xff\xff\x03garbage", "application/x-protobuf", 400),
        (b"{not json", "application/json", 400),
        (b"x" * 200_000, "application/x-protobuf", 413),
        (b"{}", "text/plain", 415),
    ]:
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": content_type})
        response = connection.getresponse()
        response.read()
        assert response.status == status
    connection.close()
    with grpc.insecure_channel(server.grpc_address) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=None,
            response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
        )
        with pytest.raises(grpc.RpcError) as error:
            export(b"\x0a\xff\xff\x03garbage", timeout=10)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        # a parent cycle and a duplicate next to a good run: the good run is still graded
        cycle_trace = bytes.fromhex("cc" * 16)
        spans = [span_pb(sid(1), sid(2), trace_id=cycle_trace), span_pb(sid(2), sid(1), trace_id=cycle_trace)]
        response = export(traces_request(spans), timeout=10)
        assert response.partial_success.rejected_spans == 0
    trace_id = agent_run(GrpcSpanExporter(endpoint=server.grpc_address, insecure=True))
    server.wait_for_metric("otelgrade_traces_completed_total", {"reason": "complete"}, 1)
    server.wait_for_metric("otelgrade_traces_completed_total", {"reason": "idle"}, 1)  # the cycle: no root
    assert server.stop() == 0
    assert grades_by_trace(server)[trace_id] == {"used_weather": "pass", "never_weather": "fail"}


def test_metrics_endpoint_speaks_openmetrics_when_asked(serve: Serve) -> None:
    server = serve()
    request = urllib.request.Request(
        f"{server.metrics_url}/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.headers["Content-Type"].startswith("application/openmetrics-text")
        assert response.read().rstrip().endswith(b"# EOF")
    with urllib.request.urlopen(f"{server.metrics_url}/metrics", timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
    with urllib.request.urlopen(f"{server.metrics_url}/healthz", timeout=5) as response:
        assert response.status == 200
    assert "otelgrade_traces_in_flight 0.0" in server.metrics_text()


def test_a_bad_config_exits_2_naming_the_problem(serve: Serve) -> None:
    server = serve({"assembly": {"settle": "soon"}}, ready=False)
    assert server.process.wait(30) == 2
    log = server.log()
    assert "otelgrade.yaml" in log and "settle" in log


def test_reload_refuses_a_broken_config_and_applies_a_good_one(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE]})
    server.write_config("suites: [{name: broken, graders: [{type: no_such_grader}]}]\n")
    server.send_signal(signal.SIGHUP)
    server.wait_for_metric("otelgrade_config_reloads_total", {"result": "refused"}, 1)
    assert server.process.poll() is None
    first = agent_run(GrpcSpanExporter(endpoint=server.grpc_address, insecure=True))
    server.wait_for_metric("otelgrade_grades_total", {"suite": "weather", "grader": "used_weather"}, 1)

    renamed = {**server.config, "suites": [{**WEATHER_SUITE, "name": "weather_v2"}]}
    server.write_config(renamed)  # no signal: the file's change is noticed
    server.wait_for_metric("otelgrade_config_reloads_total", {"result": "ok"}, 1)
    second = agent_run(HttpSpanExporter(endpoint=f"{server.http_url}/v1/traces"))
    server.wait_for_metric("otelgrade_grades_total", {"suite": "weather_v2", "grader": "used_weather"}, 1)
    assert server.stop() == 0
    suites = {(g["trace_id"], g["suite"]) for g in server.grades()}
    assert suites == {(first, "weather"), (second, "weather_v2")}
    assert "refused" in server.log()


def _sender(
    send: Callable[[bytes], Any], prefix: int, acknowledged: list[str], stop: threading.Event, failures: list[str]
) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        trace_id = prefix.to_bytes(4, "big") + n.to_bytes(12, "big")
        spans = [span_pb(sid(1), trace_id=trace_id)] + [span_pb(sid(i), sid(1), trace_id=trace_id) for i in range(2, 6)]
        try:
            send(traces_request(spans))
        except Exception as exc:  # the server has stopped listening
            failures.append(repr(exc))
            return
        acknowledged.append(trace_id.hex())


def test_sigterm_under_load_grades_every_acknowledged_trace(serve: Serve) -> None:
    server = serve({"assembly": {"settle": "30s", "idle_timeout": "60s"}})

    def over_http(body: bytes) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
        try:
            connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}")
        finally:
            connection.close()

    channel = grpc.insecure_channel(server.grpc_address)
    grpc_export = channel.unary_unary(
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        request_serializer=None,
        response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
    )

    acknowledged: list[str] = []
    failures: list[str] = []
    stop = threading.Event()
    threads = [
        threading.Thread(target=_sender, args=(over_http, 1, acknowledged, stop, failures)),
        threading.Thread(target=_sender, args=(lambda b: grpc_export(b, timeout=10), 2, acknowledged, stop, failures)),
    ]
    for thread in threads:
        thread.start()
    server.wait_for_metric("otelgrade_traces_in_flight", None, 100)
    server.send_signal(signal.SIGTERM)
    exit_code = server.process.wait(60)
    for thread in threads:  # with the server gone, each sender fails on its next request and returns
        thread.join(20)
    stop.set()
    channel.close()
    assert exit_code == 0, server.log()
    graded = {g["trace_id"] for g in server.grades()}
    assert len(acknowledged) >= 100
    assert set(acknowledged) <= graded
    assert "shutting down" in server.log()
    assert len(failures) == 2  # both senders saw the server stop accepting


def _service_pids(server: ServeProcess) -> list[int]:
    """The `serve` process and its grading workers."""
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


def _loop_wakeups(pid: int) -> int:
    """How often the process's main thread (its event loop) has gone to sleep and been woken."""
    status = Path(f"/proc/{pid}/status").read_text()
    return sum(int(line.split()[1]) for line in status.splitlines() if line.startswith("voluntary_ctxt_switches"))


@pytest.mark.parametrize("workers", [1, 2])
def test_an_idle_service_sleeps_until_something_is_due(
    serve: Serve, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTELGRADE_WORKERS", raising=False)
    server = serve({"suites": [WEATHER_SUITE], "server": {"workers": workers}})
    agent_run(GrpcSpanExporter(endpoint=server.grpc_address, insecure=True))
    server.wait_for_metric("otelgrade_runs_graded_total", {"suite": "weather"}, 1)
    pids = _service_pids(server)
    assert len(pids) == 1 + (workers if workers > 1 else 0)
    grading = pids if workers == 1 else pids[1:]  # the processes that hold and grade runs
    before = [_loop_wakeups(pid) for pid in grading]
    window = 2.0
    time.sleep(window)  # the window measured: nothing arrives, nothing is due
    woken = [(_loop_wakeups(pid) - was) / window for pid, was in zip(grading, before, strict=True)]
    # looking every 50 ms woke a loop 20 times a second; a worker answers the receiving process's heartbeat, 4
    assert max(woken) <= 10, f"event loops woke {woken} times a second while idle"
    assert server.stop() == 0


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_is_graded_settle_after_its_last_span(
    serve: Serve, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTELGRADE_WORKERS", raising=False)
    settle = 0.2
    server = serve({"suites": [WEATHER_SUITE], "server": {"workers": workers}, "assembly": {"settle": "200ms"}})
    delays, graded = [], 0.0
    for n in range(1, 6):  # each run arrives while the service sleeps: its deadline must wake it
        agent_run(GrpcSpanExporter(endpoint=server.grpc_address, insecure=True), batch=False)
        server.wait_for_metric("otelgrade_grading_delay_seconds_count", None, n)
        total = server.metric("otelgrade_grading_delay_seconds_sum")
        delays.append(total - graded)
        graded = total
    assert all(settle <= d <= settle + 0.15 for d in delays), f"graded {delays} s after the last span"
    assert server.stop() == 0


@pytest.mark.parametrize("workers", [1, 2])
def test_a_judged_run_reaches_the_grades_page_when_its_judge_answers(
    serve: Serve, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTELGRADE_WORKERS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    answers_after = 0.3
    judge = {"name": "helpful", "type": "rubric", "prompt": "Did the agent help? {trajectory}", "sample": 1.0}
    with FakeOpenAI(default=Reply.grade(1.0, delay=answers_after)) as fake:
        server = serve(
            {
                "suites": [{**WEATHER_SUITE, "graders": [*WEATHER_SUITE["graders"], judge]}],
                "judge": {"base_url": fake.base_url, "max_retries": 0},
                "server": {"workers": workers},
            }
        )
        for n in range(3):
            trace_id = agent_run(GrpcSpanExporter(endpoint=server.grpc_address, insecure=True), batch=False)
            sent = time.monotonic()
            while not any(g["grader"] == "helpful" for g in _page_grades(server, trace_id)):
                assert time.monotonic() - sent < 15, f"run {n}: the judge's grade never reached the page"
                time.sleep(0.01)
            shown_after = time.monotonic() - sent
            # settle (200 ms) and the judge's answer, a few milliseconds of work and the page's poll
            assert shown_after <= 0.2 + answers_after + 0.25, f"run {n}: on the page {shown_after:.2f}s after"
        assert server.stop() == 0


def _page_grades(server: ServeProcess, trace_id: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{server.metrics_url}/api/grades?limit=50", timeout=5) as response:
        return [g for g in json.loads(response.read())["grades"] if g["trace_id"] == trace_id]
