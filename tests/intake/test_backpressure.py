"""Memory is bounded in bytes: past `limits.max_bytes_held` the receivers push back (503 with Retry-After,
UNAVAILABLE) until what is held is graded, and `limits.max_bytes_receiving` refuses a request before its body is
read while the bodies of others fill it. RSS over a long overload is measured by `bench/overload.py`."""

from __future__ import annotations

import collections
import http.client
import socket
import time
import tracemalloc
import urllib.request
from collections.abc import Callable
from dataclasses import replace

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.core.results import Grade
from otelgrade.core.settings import UiSettings
from otelgrade.export.ui import RunLog
from otelgrade.intake.shard import owner
from otelgrade.service.server import TICK_SECONDS
from tests.conftest import ServeProcess, serve_workers
from tests.core.test_patterns import send_run
from tests.receivers_harness import sid, span_pb, traces_request

Serve = Callable[..., ServeProcess]
MIB = 1024 * 1024


def big_run(n: int, size: int = MIB) -> bytes:
    """One complete run of four spans whose attributes add up to about `size` bytes."""
    trace_id = n.to_bytes(16, "big")
    blob = "x" * (size // 4)
    spans = [span_pb(sid(1), trace_id=trace_id, blob=blob)]
    spans += [span_pb(sid(i), sid(1), trace_id=trace_id, blob=blob) for i in range(2, 5)]
    return traces_request(spans)


def post(server: ServeProcess, body: bytes) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_past_the_bytes_held_the_receivers_push_back_until_grading_frees_them(serve: Serve) -> None:
    server = serve({"limits": {"max_bytes_held": "8MiB"}, "assembly": {"settle": "2s"}})
    answers = [post(server, big_run(n)) for n in range(1, 13)]
    statuses = [a.status for a in answers]
    accepted = statuses.count(200)
    # ~1 MiB each: one process takes 8 or 9; with N workers, each holds 8/N MiB and all push back once one is full
    fewest, most = (runs_until_a_worker_holds(share, 12) for share in (8 // serve_workers(), 8 // serve_workers() + 1))
    assert fewest <= accepted <= most and statuses[accepted:] == [503] * (12 - accepted), statuses
    assert answers[-1].getheader("Retry-After") == "2"
    held = server.wait_for_metric("otelgrade_bytes_held", None, min(accepted, 8) * MIB)  # it follows within a tick
    assert held <= 10 * MIB

    with grpc.insecure_channel(server.grpc_address) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=None,
            response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
        )
        try:
            export(big_run(99), timeout=10)
            raise AssertionError("gRPC accepted a request past the limit")
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAVAILABLE

    server.wait_for_metric("otelgrade_bytes_held", None, lambda v: v == 0, timeout=20)
    assert post(server, big_run(100)).status == 200  # graded: room again
    assert server.metric("otelgrade_grading_backlog") == 0
    assert server.stop() == 0
    graded = {g["trace_id"] for g in server.grades()}
    assert len(graded) == accepted + 1  # every accepted run was graded, none of the refused


def runs_until_a_worker_holds(share: int, sent: int) -> int:
    """How many of the runs `big_run(1..sent)` are sent when the first grading worker has `share` of them."""
    held: collections.Counter[int] = collections.Counter()
    for n in range(1, sent + 1):
        worker = owner(n.to_bytes(16, "big"), serve_workers())
        held[worker] += 1
        if held[worker] == share:
            return n
    return sent


def test_a_request_is_refused_before_its_body_is_read_while_others_fill_the_receiving_limit(serve: Serve) -> None:
    server = serve({"limits": {"max_bytes_receiving": "2MiB"}})
    first = big_run(1, int(1.5 * MIB))
    slow = socket.create_connection(("127.0.0.1", server.http_port))
    head = (
        f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: {len(first)}"
    )
    slow.sendall(f"{head}\r\n\r\n".encode() + first[:-1000])  # the first request is still being received
    server.wait_for_metric("otelgrade_bytes_receiving", None, len(first) - 1000)  # counted as it arrives

    second = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    second.putrequest("POST", "/v1/traces")
    second.putheader("Content-Type", "application/x-protobuf")
    second.putheader("Content-Length", str(MIB + MIB // 4))  # more than its fair share: 2 MiB / 2 senders
    second.endheaders()  # headers only: the answer must come without the body being sent
    refused = second.getresponse()
    assert refused.status == 503 and refused.getheader("Retry-After") == "2"
    second.close()

    slow.sendall(first[-1000:])
    response = http.client.HTTPResponse(slow)
    response.begin()
    assert response.status == 200
    slow.close()
    server.wait_for_metric("otelgrade_bytes_receiving", None, lambda v: v == 0)
    assert post(server, big_run(2, MIB)).status == 200
    assert server.stop() == 0


def rss(server: ServeProcess) -> float:
    return server.metric("process_resident_memory_bytes")


def tiny_runs(traces: int, spans_per_trace: int, first: int = 1) -> list[bytes]:
    """Requests of 5000 spans without attributes: runs whose holding costs far more than their bytes."""
    spans = [
        span_pb(sid(s), sid(1) if s > 1 else b"", trace_id=t.to_bytes(16, "big"), name="s")
        for t in range(first, first + traces)
        for s in range(1, spans_per_trace + 1)
    ]
    return [traces_request(spans[i : i + 5000]) for i in range(0, len(spans), 5000)]


def test_what_tiny_spans_count_toward_the_bytes_held_is_within_twice_what_they_cost(serve: Serve) -> None:
    server = serve({"assembly": {"settle": "60s", "idle_timeout": "60s", "max_traces": 100_000}})
    requests = tiny_runs(10_000, 10)  # 100k spans
    post(server, requests[0])  # warm up what the first request allocates once
    server.wait_for_metric("otelgrade_spans_in_flight", None, 5000)
    before, counted_before = rss(server), server.metric("otelgrade_bytes_held")
    for body in requests[1:]:
        assert post(server, body).status == 200
    server.wait_for_metric("otelgrade_spans_in_flight", None, 100_000)
    time.sleep(2 * TICK_SECONDS)  # the gauge is exported at the loop's periodic tick
    grown, counted = rss(server) - before, server.metric("otelgrade_bytes_held") - counted_before
    assert grown / 2 <= counted <= grown * 2, (
        f"RSS grew {grown / 95_000:.0f} B per span, counted {counted / 95_000:.0f}"
    )
    assert server.stop() == 0


def test_graded_runs_kept_for_late_spans_are_held_within_the_byte_limit(serve: Serve) -> None:
    regrade = [{"name": "late", "regrade": True, "graders": [{"type": "max_tool_calls", "max": 50}]}]
    workers = serve_workers()  # each grading worker holds its share of the limit: 8 MiB each
    server = serve({"limits": {"max_bytes_held": 8 * MIB * workers}, "suites": regrade})
    base = rss(server)
    for n in range(1, 41):  # 40 MiB of runs, each graded before the next is sent
        assert post(server, big_run(n)).status == 200
        server.wait_for_metric("otelgrade_runs_graded_total", {"suite": "late"}, n)
    held = server.metric("otelgrade_bytes_held")
    assert 0 < held <= 2.1 * MIB * workers  # a quarter of the limit, counted
    grown = rss(server) - base  # of every process
    assert grown < 24 * MIB * workers, f"RSS grew {grown / MIB:.0f} MiB for 40 MiB of graded runs"
    late = traces_request([span_pb(sid(9), sid(1), trace_id=(40).to_bytes(16, "big"))])
    assert post(server, late).status == 200  # the newest run is still kept: it is graded again
    server.wait_for_metric("otelgrade_regrades_total", None, 1, timeout=10)
    assert server.stop() == 0


def test_the_grades_page_keeps_a_bounded_part_of_a_huge_run(serve: Serve) -> None:
    server = serve({})
    answer = "x" * (3 * MIB)
    trace_id = send_run(server, "", answer)
    server.wait_for_metric("otelgrade_runs_graded_total", {"suite": "default"}, 1)
    with urllib.request.urlopen(f"{server.metrics_url}/runs/{trace_id}", timeout=5) as response:
        page = response.read().decode()
    assert server.stop() == 0
    assert len(page) < 200_000, f"the run's page is {len(page)} characters"
    assert "more characters not kept" in page


def test_the_run_log_holds_nothing_per_run_without_summaries() -> None:
    run_log = RunLog(UiSettings(log_summary=0))
    grade = Grade("0" * 32, "0" * 16, "suite", "grader", 1.0, True, "pass", "")
    tracemalloc.start()
    try:
        for n in range(50_000):
            run_log.write([replace(grade, trace_id=f"{n:032x}")])
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 200_000, f"the run log holds {held / 50_000:.0f} B per run graded"
