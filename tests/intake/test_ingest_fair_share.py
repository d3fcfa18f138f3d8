"""The receive allowance (`limits.max_bytes_receiving`) split fairly between senders, against a real `otelgrade
serve`: while slow uploads fill it, a small sender (the SDK's OTLP/HTTP exporter) still gets its share of it, the
allowance over the senders receiving, and is served."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from contextlib import ExitStack

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.metrics import Metrics
from otelgrade.intake.ingest import Receiving
from otelgrade.intake.receivers import Overloaded
from tests.conftest import ServeProcess

Serve = Callable[..., ServeProcess]
KIB = 1024
SLOW = 30  # uploads
PIECES, PIECE = 4, 34 * KIB  # what each sends of its body: 30 x 136 KiB fill all but 16 KiB of 4 MiB


def slow_upload(server: ServeProcess) -> socket.socket:
    """A chunked OTLP/HTTP upload whose headers are sent; its body follows piece by piece."""
    sender = socket.create_connection(("127.0.0.1", server.http_port))
    sender.sendall(
        b"POST /v1/traces HTTP/1.1\r\nHost: otelgrade\r\nContent-Type: application/x-protobuf\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    return sender


def a_run_of(size: int) -> list:  # type: ignore[type-arg]
    """One agent run whose span carries about `size` bytes, as the SDK finished it."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "small-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("small").start_as_current_span(
        "invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent", "note": "x" * size}
    ):
        pass
    return list(memory.get_finished_spans())


def test_thirty_slow_uploads_filling_the_allowance_leave_a_small_sender_its_share(serve: Serve) -> None:
    server = serve({"limits": {"max_bytes_receiving": "4MiB"}, "receivers": {"body_read_timeout": "30s"}})
    exporter = HttpSpanExporter(endpoint=f"{server.http_url}/v1/traces", timeout=5)
    with ExitStack() as open_uploads:
        uploads = [slow_upload(server) for _ in range(SLOW)]
        for upload in uploads:
            open_uploads.callback(upload.close)
        for _ in range(PIECES):  # the bodies trickle in, a large piece at a time
            for upload in uploads:
                upload.sendall(f"{PIECE:x}\r\n".encode() + b"\n" * PIECE + b"\r\n")
            time.sleep(0.1)
        held = server.wait_for_metric("otelgrade_bytes_receiving", None, SLOW * PIECES * PIECE)
        began = time.monotonic()
        result = exporter.export(a_run_of(100 * KIB))  # 100 KiB: more than is left, less than 4 MiB / 31
        took = time.monotonic() - began
        print(f"{SLOW} slow uploads hold {held / KIB:.0f} KiB of 4096; a 100 KiB export: {result.name} in {took:.2f}s")
        assert result is SpanExportResult.SUCCESS
    server.wait_for_metric("otelgrade_spans_received_total", {"protocol": "http"}, 1)
    assert server.stop() == 0


def test_a_full_allowance_leaves_each_sender_its_share_up_to_twice_the_allowance() -> None:
    allowance = Receiving(Metrics(), 300)
    big, small, third = object(), object(), object()
    with ExitStack() as held:
        held.enter_context(allowance.receiving(290, big))  # all but 10 bytes
        assert allowance.fits(150, small) and not allowance.fits(151, small)  # 300 / 2 senders
        held.enter_context(allowance.receiving(150, small))
        assert not allowance.fits(1, big)  # over its share while the allowance is full
        with pytest.raises(Overloaded):
            held.enter_context(allowance.receiving(1, big))
        assert allowance.fits(100, third) and not allowance.fits(101, third)  # 300 / 3
        held.enter_context(allowance.receiving(100, third))  # 540 held
        assert allowance.fits(60, object()) and not allowance.fits(61, object())  # its share is 75, but 600 in all
    assert allowance.fits(300, big)  # all given back
