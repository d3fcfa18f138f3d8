"""Memory is bounded in bytes: past `limits.max_bytes_held` the receivers push back (503 with Retry-After,
UNAVAILABLE) until what is held is graded, and `limits.max_bytes_receiving` refuses a request before its body is
read while others are being received. RSS over a long overload is measured by `bench/overload.py`."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.conftest import ServeProcess
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
    assert 8 <= accepted <= 9 and statuses[accepted:] == [503] * (12 - accepted), statuses  # ~1 MiB each
    assert answers[-1].getheader("Retry-After") == "2"
    held = server.wait_for_metric("otelgrade_bytes_held", None, 8 * MIB)  # the gauge follows within a tick
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


def test_a_request_is_refused_before_its_body_is_read_while_others_fill_the_receiving_limit(serve: Serve) -> None:
    server = serve({"limits": {"max_bytes_receiving": "2MiB"}})
    first = big_run(1, int(1.5 * MIB))
    slow = socket.create_connection(("127.0.0.1", server.http_port))
    head = (
        f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: {len(first)}"
    )
    slow.sendall(f"{head}\r\n\r\n".encode() + first[:1000])  # the first request is still being received
    server.wait_for_metric("otelgrade_bytes_receiving", None, len(first))

    second = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    second.putrequest("POST", "/v1/traces")
    second.putheader("Content-Type", "application/x-protobuf")
    second.putheader("Content-Length", str(MIB))
    second.endheaders()  # headers only: the answer must come without the body being sent
    refused = second.getresponse()
    assert refused.status == 503 and refused.getheader("Retry-After") == "2"
    second.close()

    slow.sendall(first[1000:])
    response = http.client.HTTPResponse(slow)
    response.begin()
    assert response.status == 200
    slow.close()
    server.wait_for_metric("otelgrade_bytes_receiving", None, lambda v: v == 0)
    assert post(server, big_run(2, MIB)).status == 200
    assert server.stop() == 0
