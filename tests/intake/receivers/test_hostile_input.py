"""Hostile request bodies, sent with real HTTP and gRPC clients: none stalls the service, none gets a 500,
and a bad span costs only itself.

The stall test runs `otelgrade serve` and polls its /healthz (same event loop as the receivers) while one
hostile request is processed; every probe must be answered within a second. Run with `-s` to see the
worst stall per input.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from otelgrade.intake.receivers import RequestTooLarge
from otelgrade.intake.receivers.http import gunzip_capped
from tests.conftest import ServeProcess
from tests.receivers_harness import (
    TRACE,
    InProcessReceivers,
    log_pb,
    logs_request,
    otlp_json,
    sid,
    span_pb,
    traces_request,
)
from tests.senders import LIMIT, PROTOBUF, good_trace, post, raw_export, rpc_status

JSON = "application/json"
MAX_STALL_SECONDS = 1.0


# --- the event loop is never stalled ----------------------------------------------------------------


def _wrong_typed_spans(count: int) -> bytes:
    doc = json.loads(otlp_json(traces_request(good_trace())))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans += [{"traceId": TRACE.hex(), "spanId": f"{i + 100:016x}", "name": {"not": "a string"}} for i in range(count)]
    return json.dumps(doc).encode()


def _corrupt_spans(count: int) -> bytes:
    good = [span.SerializeToString() for span in good_trace()]
    return _request_with(*good, *[_corrupt_span()] * count)


def _over_http(content_type: str, **headers: str) -> Callable[[ServeProcess, bytes], str]:
    def send(server: ServeProcess, body: bytes) -> str:
        connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=120)
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": content_type, **headers})
        response = connection.getresponse()
        response.read()
        connection.close()
        return str(response.status)

    return send


def _over_grpc(server: ServeProcess, body: bytes) -> str:
    with grpc.insecure_channel(server.grpc_address) as channel:
        try:
            raw_export(channel, body)
        except grpc.RpcError as error:
            return str(error.code().name)
    return "OK"


GZIP = _over_http(PROTOBUF, **{"Content-Encoding": "gzip"})
HOSTILE: dict[str, tuple[Callable[[], bytes], Callable[[ServeProcess, bytes], str], str]] = {
    # 20 MB (under the default 20 MiB cap) of empty gzip members: quadratic to inflate before
    "gzip_1M_empty_members": (lambda: gzip.compress(b"") * 1_000_000, GZIP, "200"),
    "gzip_bomb": (lambda: gzip.compress(bytes(64 * 1024 * 1024)), GZIP, "413"),
    "json_nested_10M_deep": (lambda: b"[" * 10_000_000, _over_http(JSON), "400"),
    "json_100k_wrong_typed_spans": (lambda: _wrong_typed_spans(100_000), _over_http(JSON), "200"),
    "grpc_100k_corrupt_spans": (lambda: _corrupt_spans(100_000), _over_grpc, "OK"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_request_never_stalls_the_service(serve: Callable[..., ServeProcess], name: str) -> None:
    make_body, send, expected = HOSTILE[name]
    body = make_body()
    server = serve()
    with server.health_probe() as stalls:
        answer = send(server, body)
        time.sleep(0.1)  # a last probe after the answer
    print(f"{name}: {len(body)} bytes, answered {answer}, worst /healthz {max(stalls) * 1000:.0f} ms")
    assert answer == expected
    assert len(stalls) > 1 and max(stalls) < MAX_STALL_SECONDS


def test_gunzip_reads_every_member_and_refuses_a_truncated_body() -> None:
    parts = [os.urandom(70_000), b"", b"xyz" * 50_000, b"\n"]
    body = b"".join(gzip.compress(part) for part in parts)
    assert gunzip_capped(body, 10**6) == b"".join(parts)
    for cut in (1, 15, len(body) // 2, len(body) - 1):
        with pytest.raises(zlib.error):
            gunzip_capped(body[:cut], 10**6)
    with pytest.raises(RequestTooLarge):
        gunzip_capped(body, 200_000)


# --- OTLP/JSON: 400 with a reason, never 500; repaired text; a bad span costs only itself ----------


@pytest.fixture
def receivers() -> Iterator[InProcessReceivers]:
    running = InProcessReceivers(max_request_bytes=LIMIT)
    yield running
    running.close()


def spans_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(otlp_json(traces_request(good_trace())))
    return doc


def post_json(receivers: InProcessReceivers, body: bytes | str, path: str = "/v1/traces") -> tuple[int, Any]:
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    status, content_type, answer = post(receivers, data, path=path, content_type=JSON)
    assert content_type == JSON
    return status, json.loads(answer)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[" * 100_000, "nested too deeply"),
        (b'{"resourceSpans": ' + b'{"a": ' * 50_000, "nested too deeply"),
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "top level must be an object"),
        (b'{"resourceSpans": "\\ud800"}', "resourceSpans"),  # a lone surrogate echoed into the error
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5}]}]}]}', "name"),
        (b'{"resourceSpans": [{"resource": {"attributes": 7}, "scopeSpans": [{"spans": [{}]}]}]}', "attributes"),
        (b'{"resourceSpans": [' + b"1" * 5000 + b"]}", "digits"),
    ],
    ids=["brackets", "objects", "not_json", "array", "surrogate_echoed", "only_span_wrong", "resource_wrong", "bigint"],
)
def test_malformed_json_gets_400_with_the_reason(receivers: InProcessReceivers, body: bytes, reason: str) -> None:
    status, answer = post_json(receivers, body)
    assert status == 400 and answer["code"] == 3  # INVALID_ARGUMENT
    assert reason in answer["message"]
    assert receivers.metric("otelgrade_requests_total", {"protocol": "http", "result": "error"}) == 0


def test_lone_surrogates_and_invalid_utf8_in_json_are_repaired(receivers: InProcessReceivers) -> None:
    doc = spans_doc()
    resource = doc["resourceSpans"][0]
    resource["\ud800"] = 1  # a lone surrogate as an (unknown) key
    spans = resource["scopeSpans"][0]["spans"]
    spans[0]["name"] = "agent\udc00"
    spans[1]["attributes"] = [{"key": "k\ud83d", "value": {"stringValue": "v\udfff"}}]
    body = json.dumps(doc).replace('"tool"', '"tool\\u00ff"').encode().replace(b"tool\\u00ff", b"tool\xff")
    status, answer = post_json(receivers, body)
    assert status == 200
    assert "repaired" in answer["partialSuccess"]["errorMessage"]
    held = {s.span_id: s.read() for s in receivers.held()[TRACE.hex()].spans}
    assert held[sid(1).hex()].name == "agent\ufffd"
    assert held[sid(2).hex()].attributes == {"k\ufffd": "v\ufffd"}
    assert held[sid(3).hex()].name == "tool\ufffd"


def test_a_wrong_typed_json_span_costs_only_itself(receivers: InProcessReceivers) -> None:
    doc = spans_doc()
    scope = doc["resourceSpans"][0]["scopeSpans"][0]
    scope["spans"].insert(1, {"traceId": TRACE.hex(), "spanId": sid(8).hex(), "name": ["a", "list"]})
    scope["spans"].append({"traceId": TRACE.hex(), "spanId": sid(9).hex(), "startTimeUnixNano": "soon"})
    doc["resourceSpans"].append({"resource": {"attributes": 7}, "scopeSpans": [{"spans": [{}, {}]}]})
    status, answer = post_json(receivers, json.dumps(doc))
    assert status == 200
    partial = answer["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 4
    assert "malformed: 4" in partial["errorMessage"] and "name" in partial["errorMessage"]
    assert sorted(s.read().name for s in receivers.held()[TRACE.hex()].spans) == ["agent", "llm", "tool"]
    assert receivers.metric("otelgrade_spans_rejected_total", {"reason": "malformed"}) == 4


def test_a_wrong_typed_json_log_record_costs_only_itself(receivers: InProcessReceivers) -> None:
    doc = json.loads(otlp_json(logs_request([log_pb("gen_ai.user.message", sid(2))]), "logs"))
    doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"].append({"eventName": 42})
    status, answer = post_json(receivers, json.dumps(doc), path="/v1/logs")
    assert status == 200
    assert int(answer["partialSuccess"]["rejectedLogRecords"]) == 1
    [trace] = receivers.held().values()
    assert [event.event.name for event in trace.logs] == ["gen_ai.user.message"]


# --- the same hostile input over gRPC (protobuf) --------------------------------------------------


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field."""
    length, size = b"", len(payload)
    while True:
        length += bytes([(size & 0x7F) | (0x80 if size > 0x7F else 0)])
        size >>= 7
        if not size:
            return bytes([number << 3 | 2]) + length + payload


def _nested_attribute_span(depth: int) -> bytes:
    """A Span whose one attribute is an array nested `depth` deep (deeper than protobuf parses)."""
    value = _field(1, b"x")
    for _ in range(depth):
        value = _field(5, _field(1, value))  # AnyValue.array_value -> ArrayValue.values
    span = span_pb(sid(7)).SerializeToString()
    return span + _field(9, _field(1, b"deep") + _field(2, value))  # Span.attributes: KeyValue


def _corrupt_span() -> bytes:
    """A Span whose `name` field has an invalid wire type."""
    return span_pb(sid(8), name="QQQQ").SerializeToString().replace(b"\x2a\x04QQQQ", b"\x2f\x04QQQQ")


def _request_with(*raw_spans: bytes) -> bytes:
    scope = b"".join(_field(2, raw) for raw in raw_spans)  # ScopeSpans.spans
    return _field(1, _field(2, scope))  # ExportTraceServiceRequest.resource_spans -> ResourceSpans.scope_spans


@pytest.fixture
def channel(receivers: InProcessReceivers) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(receivers.grpc_address) as ch:
        yield ch


def test_grpc_a_span_nested_too_deeply_or_corrupt_costs_only_itself(
    receivers: InProcessReceivers, channel: grpc.Channel
) -> None:
    good = [span.SerializeToString() for span in good_trace()]
    response = raw_export(
        channel, _request_with(good[0], _nested_attribute_span(10_000), good[1], _corrupt_span(), good[2])
    )
    assert response.partial_success.rejected_spans == 2
    assert "could not be decoded" in response.partial_success.error_message
    assert sorted(s.read().name for s in receivers.held()[TRACE.hex()].spans) == ["agent", "llm", "tool"]
    assert receivers.metric("otelgrade_spans_rejected_total", {"reason": "malformed"}) == 2


def test_grpc_lone_surrogates_encoded_in_protobuf_strings_are_repaired(
    receivers: InProcessReceivers, channel: grpc.Channel
) -> None:
    surrogate = "\ud800".encode("utf-8", "surrogatepass")  # what a lenient encoder writes for a lone surrogate
    body = traces_request([span_pb(sid(1), name="agentQQQ", keyQQQ="valueQQQ")], service="svcQQQ")
    response = raw_export(channel, body.replace(b"QQQ", surrogate))
    assert response.partial_success.rejected_spans == 0
    span = receivers.held()[TRACE.hex()].spans[0].read()
    assert span.name == "agent\ufffd\ufffd\ufffd"
    assert span.attributes["key\ufffd\ufffd\ufffd"] == "value\ufffd\ufffd\ufffd"
    assert span.resource == {"service.name": "svc\ufffd\ufffd\ufffd"}


def test_grpc_only_bad_spans_is_invalid_argument_with_the_reason(
    receivers: InProcessReceivers, channel: grpc.Channel
) -> None:
    with pytest.raises(grpc.RpcError) as error:
        raw_export(channel, _request_with(_nested_attribute_span(10_000)))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cannot decode protobuf spans" in (error.value.details() or "")
    status, content_type, answer = post(receivers, _request_with(_nested_attribute_span(10_000)))
    assert status == 400 and "cannot decode protobuf spans" in rpc_status(answer, content_type).message


def test_grpc_logs_keep_good_records_next_to_a_corrupt_one(
    receivers: InProcessReceivers, channel: grpc.Channel
) -> None:
    good = log_pb("gen_ai.user.message", sid(2)).SerializeToString()
    corrupt = log_pb("gen_ai.choice", sid(2)).SerializeToString()[:-3]
    scope = _field(2, good) + _field(2, corrupt)  # ScopeLogs.log_records
    body = _field(1, _field(2, scope))
    response = raw_export(channel, body, "logs")
    assert isinstance(response, logs_service_pb2.ExportLogsServiceResponse)
    assert response.partial_success.rejected_log_records == 1
    [trace] = receivers.held().values()
    assert [event.event.name for event in trace.logs] == ["gen_ai.user.message"]
