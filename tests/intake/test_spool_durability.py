"""Acknowledged means durable: with `durability.spool_dir`, `otelgrade serve` killed with SIGKILL while runs wait
to settle (and while senders are still sending) grades every run it acknowledged exactly once after a restart."""

from __future__ import annotations

import asyncio
import collections
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.intake.spool import Record, Spool
from tests.conftest import ServeProcess

Serve = Callable[..., ServeProcess]


def make_runs(count: int) -> list[tuple[str, Sequence[ReadableSpan]]]:
    """`count` agent runs (an agent span over a tool span), each as (trace id, its spans)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "durable-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("durable")
    for _ in range(count):
        with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}):
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
            with tracer.start_as_current_span("execute_tool lookup", attributes=tool):
                pass
    by_trace: dict[str, list[ReadableSpan]] = collections.defaultdict(list)
    for span in memory.get_finished_spans():
        by_trace[f"{span.context.trace_id:032x}"].append(span)
    return list(by_trace.items())


def send(exporter: SpanExporter, runs: list[tuple[str, Sequence[ReadableSpan]]], acknowledged: list[str]) -> None:
    """One export request per run; a run is acknowledged when the SDK's exporter reports success."""
    for trace_id, spans in runs:
        if exporter.export(spans) is SpanExportResult.SUCCESS:
            acknowledged.append(trace_id)


def graded_lines(*servers: ServeProcess) -> collections.Counter[str]:
    return collections.Counter(g["trace_id"] for server in servers for g in server.grades())


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not after {timeout}s: {what}")
        time.sleep(0.05)


def test_kill_9_loses_no_acknowledged_run_and_grades_none_twice(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    config: dict[str, Any] = {
        "durability": {"spool_dir": str(spool)},
        "assembly": {"settle": "3s", "idle_timeout": "60s"},
    }
    first = serve(config)
    http = HttpSpanExporter(endpoint=f"{first.http_url}/v1/traces", timeout=2)
    grpc = GrpcSpanExporter(endpoint=first.grpc_address, insecure=True, timeout=2)

    graded_before: list[str] = []  # graded, and marked, before the kill
    send(http, make_runs(30), graded_before)
    wait_until(lambda: len(graded_lines(first)) == 30, 20, "the first 30 runs graded")

    waiting: list[str] = []  # acknowledged, waiting to settle at the kill
    senders = [threading.Thread(target=send, args=(e, make_runs(100), waiting)) for e in (http, grpc)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    in_flight: list[str] = []  # a sender still sending when the process dies
    stop_sending = threading.Event()
    late_runs = make_runs(400)

    def keep_sending() -> None:
        for run in late_runs:
            if stop_sending.is_set():
                return
            send(http, [run], in_flight)

    still_sending = threading.Thread(target=keep_sending)
    still_sending.start()
    wait_until(lambda: len(in_flight) >= 20, 10, "the late sender acknowledged")
    first.kill()  # SIGKILL to the process this test started
    stop_sending.set()
    still_sending.join()
    http.shutdown()
    grpc.shutdown()
    assert len(waiting) == 200 and len(graded_lines(first)) == 30

    second = serve({**config, "assembly": {"settle": "200ms", "idle_timeout": "2s"}})
    acknowledged = set(graded_before) | set(waiting) | set(in_flight)
    wait_until(lambda: acknowledged <= set(graded_lines(first, second)), 30, "every acknowledged run graded")
    time.sleep(1)  # anything graded twice would be in by now
    assert second.stop() == 0
    lines = graded_lines(first, second)
    assert acknowledged <= set(lines)
    assert max(lines.values()) == 1, [t for t, n in lines.items() if n > 1]
    assert "spool: replayed" in second.log()
    assert not list(spool.glob("segment-*")), "a clean stop leaves nothing to replay"


def spool_of(directory: Path, runs: int, spans_per_run: int) -> None:
    """Write a spool of `runs` acknowledged, ungraded requests (one run of `spans_per_run` tool spans each), as a
    server killed before grading them leaves it."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "durable-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("durable")
    with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}):
        for n in range(spans_per_run):
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "n": n}
            with tracer.start_as_current_span("execute_tool lookup", attributes=tool):
                pass
    template = encode_spans(memory.get_finished_spans())
    spans = [span for resource in template.resource_spans for scope in resource.scope_spans for span in scope.spans]
    requests: list[tuple[Record, list[str]]] = []
    for n in range(runs):
        trace_id = (n + 1).to_bytes(16, "big")
        for span in spans:
            span.trace_id = trace_id
        requests.append((Record("traces", "protobuf", template.SerializeToString()), [trace_id.hex()]))

    async def append_all() -> None:
        for record, trace_ids in requests:
            await spool.append(record, trace_ids)

    spool = Spool(directory, fsync="never")
    asyncio.run(append_all())
    spool.close()


def test_replay_keeps_the_liveness_probe_answering_and_readiness_false_until_done(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool_of(spool, runs=3000, spans_per_run=40)  # 120,000 spans: replayed in a second or more
    server = serve({"durability": {"spool_dir": str(spool)}, "assembly": {"settle": "30s"}}, ready=False)
    answers: list[tuple[int, float]] = []  # (/readyz status, how long /readyz and /healthz took to answer)
    while not answers or answers[-1][0] != 200:
        assert server.process.poll() is None, server.log()
        began = time.monotonic()
        try:
            ready = probe(f"{server.metrics_url}/readyz")
            assert probe(f"{server.metrics_url}/healthz") == 200
        except OSError:  # not listening yet
            time.sleep(0.02)
            continue
        answers.append((ready, time.monotonic() - began))
    assert "spool: replayed 3000 request(s)" in server.log()
    answered_while_replaying = [took for ready, took in answers if ready == 503]
    slowest = max(took for _, took in answers)
    figures = f"{len(answered_while_replaying)} answer(s) while not ready, the slowest in {slowest:.2f}s"
    # How many probes fit in the replay depends on the machine's load (the replay thread shares the interpreter);
    # before, the loop replayed before it answered anything, so none did.
    assert answered_while_replaying and slowest < 0.5, figures


def probe(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code
