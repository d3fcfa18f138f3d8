"""The OTLP/gRPC receiver's answers to good and bad input, and what it keeps."""

from __future__ import annotations

import random

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from tests.receivers_harness import (
    TRACE,
    InProcessReceivers,
    log_pb,
    logs_request,
    sid,
    span_pb,
    traces_request,
)
from tests.senders import LIMIT, assert_still_serving, good_trace, raw_export

# --- gRPC --------------------------------------------------------------------------------------


def test_grpc_good_request_with_the_generated_stub(receivers: InProcessReceivers, channel: grpc.Channel) -> None:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(traces_request(good_trace()))
    response = stub.Export(request, timeout=10)
    assert not response.HasField("partial_success")
    assert len(receivers.held()[TRACE.hex()].spans) == 3
    assert receivers.metric("otelgrade_spans_received_total", {"protocol": "grpc"}) == 3


@pytest.mark.parametrize("service", ["trace", "logs"])
def test_grpc_undecodable_payloads_are_invalid_argument(
    receivers: InProcessReceivers, channel: grpc.Channel, service: str
) -> None:
    good = traces_request(good_trace()) if service == "trace" else logs_request([log_pb("gen_ai.choice", sid(1))])
    for bad in (good[:-5], b"\x0a\xff\xff\x03" + random.Random(5).randbytes(100)):
        with pytest.raises(grpc.RpcError) as error:
            raw_export(channel, bad, service)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_still_serving(receivers)


def test_grpc_oversized_and_gzip_bomb_requests_are_refused(
    receivers: InProcessReceivers, channel: grpc.Channel
) -> None:
    big = traces_request([span_pb(sid(i + 1), payload="x" * 2000) for i in range(LIMIT // 2000 + 10)])
    with pytest.raises(grpc.RpcError) as error:
        raw_export(channel, big)
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # compresses to a few kB on the wire; the limit applies to what it inflates to
    with pytest.raises(grpc.RpcError) as error:
        raw_export(channel, big, compression=grpc.Compression.Gzip)
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    small = traces_request(good_trace())
    raw_export(channel, small, compression=grpc.Compression.Gzip)
    assert len(receivers.held()[TRACE.hex()].spans) == 3


def test_grpc_partial_success_keeps_the_good_spans(receivers: InProcessReceivers, channel: grpc.Channel) -> None:
    spans = [*good_trace(), span_pb(b"\0" * 8), span_pb(sid(3), sid(1))]
    response = raw_export(channel, traces_request(spans))
    assert response.partial_success.rejected_spans == 2
    assert len(receivers.held()[TRACE.hex()].spans) == 3


def test_grpc_invalid_utf8_is_repaired(receivers: InProcessReceivers, channel: grpc.Channel) -> None:
    body = traces_request([span_pb(sid(1), name="agentQQQ")]).replace(b"QQQ", b"\xc3\x28\xa0")
    response = raw_export(channel, body)
    assert response.partial_success.rejected_spans == 0
    span = receivers.held()[TRACE.hex()].spans[0].read()
    assert span.name.startswith("agent") and "\ufffd" in span.name


def test_grpc_logs(receivers: InProcessReceivers, channel: grpc.Channel) -> None:
    records = [log_pb("gen_ai.user.message", sid(2)), log_pb("http.request", sid(2))]
    response = raw_export(channel, logs_request(records), "logs")
    assert response.partial_success.rejected_log_records == 0
    assert len(receivers.held()[TRACE.hex()].logs) == 1
    assert receivers.metric("otelgrade_log_records_received_total", {"protocol": "grpc"}) == 2
