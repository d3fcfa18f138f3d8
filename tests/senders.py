"""Talk to the receivers as senders do: OTLP over HTTP and raw gRPC calls, and the traces they send."""

from __future__ import annotations

import http.client

import grpc
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.receivers_harness import (
    TRACE,
    InProcessReceivers,
    sid,
    span_pb,
    traces_request,
)

LIMIT = 1024 * 1024
PROTOBUF = "application/x-protobuf"


def post(
    receivers: InProcessReceivers,
    body: bytes,
    path: str = "/v1/traces",
    content_type: str = PROTOBUF,
    method: str = "POST",
    chunked: bool = False,
    **headers: str,
) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", receivers.http_port, timeout=10)
    try:
        all_headers = {"Content-Type": content_type, **{k.replace("_", "-"): v for k, v in headers.items()}}
        if chunked:  # as Node's exporter sends it: no Content-Length
            pieces = [body[i : i + 1000] for i in range(0, len(body), 1000)]
            connection.request(method, path, body=iter(pieces), headers=all_headers, encode_chunked=True)
        else:
            connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


OTHER_TRACE = bytes.fromhex("aa" * 16)


def good_trace(trace_id: bytes = TRACE) -> list[trace_pb2.Span]:
    return [
        span_pb(sid(1), name="agent", trace_id=trace_id),
        span_pb(sid(2), sid(1), name="llm", trace_id=trace_id),
        span_pb(sid(3), sid(1), name="tool", trace_id=trace_id),
    ]


def assert_still_serving(receivers: InProcessReceivers) -> None:
    other_trace = bytes.fromhex("0102030405060708090a0b0c0d0e0f10")
    status, _, _ = post(receivers, traces_request([span_pb(sid(9), trace_id=other_trace)]))
    assert status == 200
    assert other_trace.hex() in receivers.held()


def rpc_status(body: bytes, content_type: str) -> status_pb2.Status:
    if content_type.startswith("application/json"):
        return json_format.Parse(body, status_pb2.Status())
    return status_pb2.Status.FromString(body)


def raw_export(channel: grpc.Channel, body: bytes, service: str = "trace", compression: grpc.Compression | None = None):  # type: ignore[no-untyped-def]
    name = {"trace": "trace.v1.TraceService", "logs": "logs.v1.LogsService"}[service]
    response_type = (
        trace_service_pb2.ExportTraceServiceResponse
        if service == "trace"
        else logs_service_pb2.ExportLogsServiceResponse
    )
    call = channel.unary_unary(
        f"/opentelemetry.proto.collector.{name}/Export",
        request_serializer=None,
        response_deserializer=response_type.FromString,
    )
    return call(body, timeout=10, compression=compression)
