"""The OTLP/HTTP receiver's answers to good and bad input, what it keeps, and when it asks senders to retry."""

from __future__ import annotations

import gzip
import http.client
import json
import random
import threading

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

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
from tests.senders import LIMIT, OTHER_TRACE, PROTOBUF, assert_still_serving, good_trace, post, raw_export, rpc_status

# --- HTTP: good input --------------------------------------------------------------------------


def test_http_protobuf_request_is_kept_and_answered_in_protobuf(receivers: InProcessReceivers) -> None:
    status, content_type, body = post(receivers, traces_request(good_trace()))
    assert status == 200 and content_type == PROTOBUF
    assert not trace_service_pb2.ExportTraceServiceResponse.FromString(body).HasField("partial_success")
    held = receivers.held()[TRACE.hex()]
    assert sorted(s.read().name for s in held.spans) == ["agent", "llm", "tool"]
    assert receivers.metric("otelgrade_spans_received_total", {"protocol": "http"}) == 3


def test_http_otlp_json_with_hex_ids_is_kept_and_answered_in_json(receivers: InProcessReceivers) -> None:
    status, content_type, body = post(
        receivers, otlp_json(traces_request(good_trace())), content_type="application/json"
    )
    assert status == 200 and content_type == "application/json"
    assert json.loads(body) == {}
    held = receivers.held()[TRACE.hex()]
    parents = {s.span_id: s.parent_id for s in held.spans}
    assert parents == {sid(1).hex(): None, sid(2).hex(): sid(1).hex(), sid(3).hex(): sid(1).hex()}


def test_http_json_partial_success_is_json(receivers: InProcessReceivers) -> None:
    doc = json.loads(otlp_json(traces_request([*good_trace(), span_pb(sid(7))])))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]["spanId"] = "not-hex"
    status, _, body = post(receivers, json.dumps(doc).encode(), content_type="application/json")
    assert status == 200
    assert json.loads(body)["partialSuccess"]["rejectedSpans"] in (1, "1")  # int64: either JSON form is valid
    assert len(receivers.held()[TRACE.hex()].spans) == 3


def test_http_gzip_and_chunked_bodies(receivers: InProcessReceivers) -> None:
    body = traces_request(good_trace())
    status, _, _ = post(receivers, gzip.compress(body), Content_Encoding="gzip")
    assert status == 200
    assert len(receivers.held()[TRACE.hex()].spans) == 3
    status, _, _ = post(
        receivers, gzip.compress(traces_request(good_trace(OTHER_TRACE))), Content_Encoding="gzip", chunked=True
    )
    assert status == 200
    assert len(receivers.held()[OTHER_TRACE.hex()].spans) == 3


# --- HTTP: bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", [PROTOBUF, "application/json"])
def test_http_undecodable_payloads_get_400_with_a_status_body(receivers: InProcessReceivers, content_type: str) -> None:
    body = traces_request(good_trace())[:-7] if content_type == PROTOBUF else b'{"resourceSpans": [ {'
    status, answered_type, answer = post(receivers, body, content_type=content_type)
    assert status == 400 and answered_type == content_type
    assert rpc_status(answer, answered_type).code == 3  # INVALID_ARGUMENT
    assert rpc_status(answer, answered_type).message
    assert_still_serving(receivers)


def test_http_random_bytes_never_break_the_server(receivers: InProcessReceivers) -> None:
    rng = random.Random(1234)
    # a length-delimited field 1 that claims more bytes than follow is always invalid
    status, _, _ = post(receivers, b"\x0a\xff\xff\x03" + rng.randbytes(200))
    assert status == 400
    for _ in range(40):
        status, _, _ = post(receivers, rng.randbytes(rng.randrange(1, 400)))
        assert status in (200, 400)
    assert_still_serving(receivers)


def test_http_wrong_content_type_path_and_method(receivers: InProcessReceivers) -> None:
    body = traces_request(good_trace())
    assert post(receivers, body, content_type="text/plain")[0] == 415
    assert post(receivers, body, Content_Encoding="br")[0] == 415
    assert post(receivers, body, path="/v1/metrics")[0] == 404
    assert post(receivers, b"", method="GET")[0] == 405
    assert post(receivers, body, method="PUT")[0] == 405
    assert receivers.held() == {}
    assert_still_serving(receivers)


def test_http_oversized_requests_get_413(receivers: InProcessReceivers) -> None:
    big = traces_request([span_pb(sid(i + 1), payload="x" * 2000) for i in range(LIMIT // 2000 + 10)])
    assert len(big) > LIMIT
    assert post(receivers, big)[0] == 413
    assert post(receivers, big, chunked=True)[0] == 413
    assert receivers.held() == {}
    assert_still_serving(receivers)


def test_http_gzip_bomb_is_refused_after_decompression(receivers: InProcessReceivers) -> None:
    bomb = gzip.compress(b"\0" * (200 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < LIMIT
    status, content_type, body = post(receivers, bomb, Content_Encoding="gzip")
    assert status == 413
    assert rpc_status(body, content_type).code == 8  # RESOURCE_EXHAUSTED
    assert post(receivers, b"not gzip at all", Content_Encoding="gzip")[0] == 400
    assert_still_serving(receivers)


def test_http_keeps_good_spans_and_reports_bad_ones_as_partial_success(receivers: InProcessReceivers) -> None:
    spans = [*good_trace(), span_pb(b""), span_pb(sid(4), trace_id=b"\0" * 16), span_pb(sid(2), sid(1))]
    status, _, body = post(receivers, traces_request(spans))
    assert status == 200
    partial = trace_service_pb2.ExportTraceServiceResponse.FromString(body).partial_success
    assert partial.rejected_spans == 3
    assert "invalid_id" in partial.error_message and "duplicate_span_id" in partial.error_message
    assert len(receivers.held()[TRACE.hex()].spans) == 3
    assert receivers.metric("otelgrade_spans_rejected_total", {"reason": "invalid_id"}) == 2
    assert receivers.metric("otelgrade_spans_rejected_total", {"reason": "duplicate_span_id"}) == 1


def test_http_invalid_utf8_in_attributes_is_repaired_not_refused(receivers: InProcessReceivers) -> None:
    body = traces_request([span_pb(sid(1), prompt="abcXYZdef")])
    broken = body.replace(b"XYZ", b"\xff\xfe\xfd")
    status, _, answer = post(receivers, broken)
    assert status == 200
    partial = trace_service_pb2.ExportTraceServiceResponse.FromString(answer).partial_success
    assert partial.rejected_spans == 0 and "UTF-8" in partial.error_message
    span = receivers.held()[TRACE.hex()].spans[0].read()
    assert span.attributes["prompt"].startswith("abc") and "\ufffd" in span.attributes["prompt"]


def test_http_parent_cycles_are_held_without_harm(receivers: InProcessReceivers) -> None:
    spans = [span_pb(sid(1), sid(2)), span_pb(sid(2), sid(1)), span_pb(sid(3), sid(3))]
    status, _, body = post(receivers, traces_request(spans))
    assert status == 200 and body == b""
    assert len(receivers.held()[TRACE.hex()].spans) == 3
    assert_still_serving(receivers)


# --- HTTP: logs --------------------------------------------------------------------------------


def test_http_logs_keep_genai_events_and_count_the_rest(receivers: InProcessReceivers) -> None:
    records = [
        log_pb("gen_ai.user.message", sid(2)),
        log_pb("app.started", sid(2)),
        log_pb("gen_ai.choice", b""),  # no span to join
    ]
    status, _, body = post(receivers, logs_request(records), path="/v1/logs")
    assert status == 200
    assert not logs_service_pb2.ExportLogsServiceResponse.FromString(body).HasField("partial_success")
    [event] = receivers.held()[TRACE.hex()].logs
    assert event.event.name == "gen_ai.user.message" and event.event.body == {"content": "hello"}
    assert receivers.metric("otelgrade_log_records_received_total", {"protocol": "http"}) == 3
    assert receivers.metric("otelgrade_log_records_dropped_total", {"reason": "not_genai"}) == 1
    assert receivers.metric("otelgrade_log_records_dropped_total", {"reason": "no_span"}) == 1


def test_http_bad_logs_get_the_same_answers_as_bad_traces(receivers: InProcessReceivers) -> None:
    good = logs_request([log_pb("gen_ai.user.message", sid(2))])
    assert post(receivers, good[:-3], path="/v1/logs")[0] == 400
    assert post(receivers, b"{]", path="/v1/logs", content_type="application/json")[0] == 400
    assert post(receivers, good, path="/v1/logs", content_type="text/csv")[0] == 415
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))
    assert post(receivers, bomb, path="/v1/logs", Content_Encoding="gzip")[0] == 413
    assert post(receivers, gzip.compress(good), path="/v1/logs", Content_Encoding="gzip", chunked=True)[0] == 200
    assert len(receivers.held()[TRACE.hex()].logs) == 1


# --- back-pressure -----------------------------------------------------------------------------


def test_when_grading_is_behind_senders_are_asked_to_retry(
    receivers: InProcessReceivers, channel: grpc.Channel
) -> None:
    receivers.busy = True
    status, content_type, headers = post_with_headers(receivers, traces_request(good_trace()))
    assert status == 503 and content_type == PROTOBUF and int(headers["Retry-After"]) > 0
    with pytest.raises(grpc.RpcError) as error:
        raw_export(channel, traces_request(good_trace()))
    assert error.value.code() == grpc.StatusCode.UNAVAILABLE
    assert receivers.held() == {}
    assert receivers.metric(
        "otelgrade_requests_total", {"protocol": "http", "signal": "traces", "result": "overloaded"}
    )

    # the SDK's exporter retries until the server accepts again
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=f"{receivers.http_url}/v1/traces", timeout=20)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    threading.Timer(0.5, lambda: setattr(receivers, "busy", False)).start()
    with provider.get_tracer("t").start_as_current_span("root") as root:
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.shutdown()
    assert [s.read().name for s in receivers.held()[trace_id].spans] == ["root"]


def post_with_headers(receivers: InProcessReceivers, body: bytes) -> tuple[int, str, dict[str, str]]:
    connection = http.client.HTTPConnection("127.0.0.1", receivers.http_port, timeout=10)
    try:
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": PROTOBUF})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Content-Type", ""), dict(response.getheaders())
    finally:
        connection.close()
