"""A span that carries its `trace_id` field twice is routed to a grading worker by the id the worker's decode
reads (protobuf: the last occurrence; OTLP/JSON: what the JSON parser keeps, also the last), so the span stays with
its trace: split and decode agree, and a real `otelgrade serve` with two workers grades the run with its model
call, once."""

from __future__ import annotations

import collections
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from otelgrade.core.settings import WORKERS_ENV
from otelgrade.intake.decode import decode_traces, protobuf_request
from otelgrade.intake.shard import owner, split
from tests.conftest import ServeProcess
from tests.intake.test_spool_durability import wait_until
from tests.receivers_harness import kv, sid, span_pb

Serve = Callable[..., ServeProcess]
WORKERS = 2
MODEL = "model-of-the-repeated-span"


def ids_owned_by_each_worker() -> tuple[bytes, bytes]:
    """Two trace ids: the first owned by worker 0, the second by worker 1."""
    found: dict[int, bytes] = {}
    n = 0
    while len(found) < WORKERS:
        n += 1
        found.setdefault(owner(n.to_bytes(16, "big"), WORKERS), n.to_bytes(16, "big"))
    return found[0], found[1]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def protobuf_body(first: bytes, last: bytes) -> bytes:
    """An export request of one run in trace `last`: an agent span, and a model call under it whose bytes give
    `trace_id` twice, `first` then `last` (bytes written by hand: protobuf's own encoder writes a field once)."""
    root = span_pb(sid(1), trace_id=last, name="invoke_agent").SerializeToString()
    chat = trace_pb2.Span(
        trace_id=first,
        span_id=sid(2),
        parent_span_id=sid(1),
        name=f"chat {MODEL}",
        start_time_unix_nano=1_700_000_000_100_000_000,
        end_time_unix_nano=1_700_000_000_900_000_000,
        attributes=[kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", MODEL)],
    ).SerializeToString()
    chat += _field(1, last)  # trace_id again
    scope = _field(2, root) + _field(2, chat)  # ScopeSpans.spans
    resource = _field(1, _field(1, kv("service.name", "repeat-agent").SerializeToString()))
    return _field(1, resource + _field(2, scope))  # ExportTraceServiceRequest.resource_spans


def json_body(first: bytes, last: bytes) -> bytes:
    """The same run as OTLP/JSON, the model call's object naming `traceId` twice."""
    times = '"startTimeUnixNano": "1700000000100000000", "endTimeUnixNano": "1700000000900000000"'
    chat = (
        f'{{"traceId": "{first.hex()}", "spanId": "{sid(2).hex()}", "parentSpanId": "{sid(1).hex()}", '
        f'"name": "chat {MODEL}", {times}, "traceId": "{last.hex()}", "attributes": ['
        '{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}, '
        f'{{"key": "gen_ai.request.model", "value": {{"stringValue": "{MODEL}"}}}}]}}'
    )
    root = (
        f'{{"traceId": "{last.hex()}", "spanId": "{sid(1).hex()}", "name": "invoke_agent", {times}, '
        '"attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}'
    )
    service = '{"attributes": [{"key": "service.name", "value": {"stringValue": "repeat-agent"}}]}'
    return f'{{"resourceSpans": [{{"resource": {service}, "scopeSpans": [{{"spans": [{root}, {chat}]}}]}}]}}'.encode()


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
@pytest.mark.parametrize("order", ["0 then 1", "1 then 0"])
def test_split_sends_the_span_to_the_worker_owning_the_trace_its_decode_reads(encoding: str, order: str) -> None:
    first, last = ids_owned_by_each_worker()[:: 1 if order == "0 then 1" else -1]
    body = (protobuf_body if encoding == "protobuf" else json_body)(first, last)
    decoded = decode_traces(body, encoding)  # type: ignore[arg-type]
    assert {s.trace_id for s in decoded.spans} == {last.hex()}  # the last occurrence, in both encodings
    converted, _, _ = protobuf_request(body, encoding, "traces")  # type: ignore[arg-type]  # what workers are sent
    parts = split(converted, "traces", WORKERS)
    assert list(parts) == [owner(last, WORKERS)]
    assert len(decode_traces(parts[owner(last, WORKERS)]).spans) == 2


@pytest.fixture
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)


@pytest.mark.usefixtures("two_workers")
def test_two_workers_grade_each_run_with_its_model_call_once(serve: Serve) -> None:
    server = serve({"server": {"workers": WORKERS}})
    first, last = ids_owned_by_each_worker()
    for content_type, body in (
        ("application/x-protobuf", protobuf_body(first, last)),  # the run is in trace `last`
        ("application/json", json_body(last, first)),  # the other way round: the run is in trace `first`
    ):
        request = urllib.request.Request(
            f"{server.http_url}/v1/traces", data=body, headers={"Content-Type": content_type}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
    for trace in (last, first):
        shown = trace.hex()
        wait_until(lambda: MODEL in run_page(server, shown), 15, f"run {shown} shown with its model call")  # noqa: B023
    assert server.stop() == 0
    graded = collections.Counter(g["trace_id"] for g in server.grades())
    print(f"grades by trace: {dict(graded)}")
    assert graded == {last.hex(): 1, first.hex(): 1}  # one run each, graded once


def run_page(server: ServeProcess, trace_id: str) -> str:
    """The grades page of a run ("" until it is graded)."""
    try:
        with urllib.request.urlopen(f"{server.metrics_url}/runs/{trace_id}", timeout=10) as response:
            return str(response.read().decode())
    except urllib.error.HTTPError:
        return ""
