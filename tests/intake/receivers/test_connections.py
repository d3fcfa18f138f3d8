"""Connections that never finish their request headers cannot hold a port: on the OTLP/HTTP port, the metrics and
grades page port and the OTLP/gRPC port, a connection that has not sent its headers (its HTTP/2 preface) within
`header_timeout` is closed, at most `max_connections` are open, and `/healthz` and real senders are answered
meanwhile. Raw sockets on 127.0.0.1, a live `serve`."""

from __future__ import annotations

import selectors
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.conftest import ServeProcess
from tests.export.ui.test_runlog import booking_run

HELD = 300
LIMITS = {"header_timeout": "1s", "max_connections": 100}
PARTIAL = {"http": b"POST /v1/traces HTT", "metrics": b"GET /heal", "grpc": b"PRI * HTTP/2.0\r\n"}


@contextmanager
def half_open(port: int, first_bytes: bytes, count: int = HELD) -> Iterator[list[socket.socket]]:
    """`count` connections that each send the start of a request and nothing more."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(first_bytes)
            sockets.append(s)
        yield sockets
    finally:
        for s in sockets:
            s.close()


def seconds_until_all_closed(sockets: list[socket.socket], timeout: float) -> float:
    """How long until the server has closed every one of these connections (fails after `timeout`)."""
    began = time.monotonic()
    selector = selectors.DefaultSelector()
    for s in sockets:
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ)
    open_ = len(sockets)
    while open_:
        left = timeout - (time.monotonic() - began)
        assert left > 0, f"{open_} of {len(sockets)} connections still open after {timeout}s"
        for key, _ in selector.select(left):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, BlockingIOError) as exc:
                data = b"" if isinstance(exc, ConnectionResetError) else b"?"
            if not data:
                selector.unregister(sock)
                open_ -= 1
    return time.monotonic() - began


def answered_in(url: str, body: bytes | None = None) -> float:
    began = time.monotonic()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/x-protobuf"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        response.read()
    return time.monotonic() - began


@pytest.mark.integration
@pytest.mark.parametrize("port", ["http", "metrics"])
def test_connections_that_never_finish_their_headers_are_closed_and_capped(
    serve: Callable[..., ServeProcess], port: str
) -> None:
    """Before: held 75 s (aiohttp's keep-alive timeout), without a cap: at a 1,024-descriptor limit every
    legitimate request and `/healthz` timed out."""
    server = serve({"receivers": LIMITS, "metrics": LIMITS})
    number = server.http_port if port == "http" else server.metrics_port
    empty = trace_service_pb2.ExportTraceServiceRequest().SerializeToString()
    with half_open(number, PARTIAL[port]) as sockets:
        assert answered_in(f"{server.metrics_url}/healthz") < 1.0
        assert answered_in(f"{server.http_url}/v1/traces", empty) < 1.0
        took = seconds_until_all_closed(sockets, timeout=6.0)
        assert answered_in(f"{server.metrics_url}/healthz") < 1.0
    assert took < 3.0
    setting = "receivers" if port == "http" else "metrics"
    assert f"connections open on 127.0.0.1:{number} ({setting}.max_connections)" in server.log()
    assert server.stop() == 0


@pytest.mark.integration
def test_grpc_connections_that_never_finish_their_handshake_are_closed(serve: Callable[..., ServeProcess]) -> None:
    """Before: held for grpcio's default handshake timeout, 120 s."""
    server = serve({"receivers": LIMITS, "metrics": LIMITS})
    with half_open(server.grpc_port, PARTIAL["grpc"], count=50) as sockets:
        booking_run(server.grpc_address, 2)  # a real sender is served meanwhile
        server.wait_for_metric("otelgrade_runs_graded_total", None, 1)
        assert answered_in(f"{server.metrics_url}/healthz") < 1.0
        took = seconds_until_all_closed(sockets, timeout=6.0)
    assert took < 4.0
    assert server.stop() == 0
