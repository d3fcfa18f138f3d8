"""Bounded fuzzing of the receive path with Hypothesis: decode (protobuf and OTLP/JSON, traces and logs)
and both receivers through real HTTP and gRPC clients. Whatever the body, the answer is a decoded
request or a 4xx / INVALID_ARGUMENT-class error, never an exception, a 500 or INTERNAL; a well-formed
request decodes the same from protobuf and from JSON.

Inputs are OTLP requests built from the schema (nested attribute values, text with lone surrogates,
ids of any length), then damaged: a field replaced by any JSON value, bytes flipped, cut or inserted,
gzip on top. The inputs that once broke the receive path are kept in tests/fuzz_corpus/ and replayed.

The default budget keeps the whole file well under a minute. A longer run:
    OTELGRADE_FUZZ_EXAMPLES=20000 .venv-test/bin/pytest -p no:cacheprovider tests/intake/test_decode_fuzz.py
(the number is the examples per decode property; the receiver properties get a quarter of it).
"""

from __future__ import annotations

import base64
import copy
import functools
import gzip
import http.client
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.intake.decode import DecodeError, decode_logs, decode_traces
from otelgrade.intake.receivers import Encoding
from tests.paths import TESTS
from tests.receivers_harness import InProcessReceivers, otlp_json
from tests.senders import raw_export

CORPUS = TESTS / "fuzz_corpus"
EXAMPLES = int(os.environ.get("OTELGRADE_FUZZ_EXAMPLES", "200"))
DECODE = settings(max_examples=EXAMPLES, deadline=None, database=None)
RECEIVE = settings(
    max_examples=max(EXAMPLES // 4, 50),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LIMIT = 256 * 1024
DECODERS: dict[str, Callable[[bytes, Encoding], object]] = {"traces": decode_traces, "logs": decode_logs}
GRPC_ANSWERS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED}

# --- building requests from the schema ---------------------------------------------------------

clean_text = st.text(max_size=12) | st.sampled_from(["", "gen_ai.agent.name", "é"])
# Text as senders produce it, lone surrogates included (protobuf then carries invalid UTF-8, JSON an escape).
text = clean_text | st.text(st.characters() | st.characters(categories=["Cs"]), max_size=12)
ids = st.binary(max_size=17) | st.binary(min_size=16, max_size=16) | st.binary(min_size=8, max_size=8)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


def _deep_list() -> list[Any]:
    """Lists nested deeper than protobuf's JSON parser goes (100 levels)."""
    deep: list[Any] = []
    for _ in range(250):
        deep = [deep]
    return deep


@functools.cache
def request(signal: str, words: st.SearchStrategy[str] = text) -> st.SearchStrategy[dict[str, Any]]:
    """An OTLP export request in protobuf's dict form, with ids as bytes (each encoding writes them its way).

    Built once per signal: composing the strategy costs more than drawing from it."""
    scalar = (
        st.builds(lambda v: {"stringValue": v}, words)
        | st.builds(lambda v: {"intValue": str(v)}, st.integers(-(2**63), 2**63 - 1))
        | st.builds(lambda v: {"doubleValue": v}, st.floats(allow_nan=False, allow_infinity=False))
        | st.builds(lambda v: {"boolValue": v}, st.booleans())
        | st.just({"bytesValue": "AAEC"})
    )
    any_value = st.recursive(
        scalar,
        lambda inner: (
            st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(inner, max_size=3))
            | st.builds(
                lambda kvs: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kvs]}},
                st.lists(st.tuples(words, inner), max_size=3),
            )
        ),
        max_leaves=8,
    )
    attributes = st.lists(st.builds(lambda k, v: {"key": k, "value": v}, words, any_value), max_size=4)
    times = st.integers(0, 2**64 - 1).map(str)
    if signal == "traces":
        resources, scopes, items = "resourceSpans", "scopeSpans", "spans"
        item = st.fixed_dictionaries(
            {"traceId": ids, "spanId": ids, "name": words},
            optional={
                "parentSpanId": ids,
                "kind": st.integers(0, 5),
                "startTimeUnixNano": times,
                "endTimeUnixNano": times,
                "attributes": attributes,
                "events": st.lists(
                    st.fixed_dictionaries({"name": words, "timeUnixNano": times, "attributes": attributes}),
                    max_size=2,
                ),
                "status": st.fixed_dictionaries({"code": st.integers(0, 2), "message": words}),
            },
        )
    else:
        resources, scopes, items = "resourceLogs", "scopeLogs", "logRecords"
        item = st.fixed_dictionaries(
            {"traceId": ids, "spanId": ids},
            optional={
                "eventName": st.sampled_from(["gen_ai.user.message", "gen_ai.choice", "other"]) | words,
                "timeUnixNano": times,
                "body": any_value,
                "attributes": attributes,
            },
        )
    scope = st.fixed_dictionaries(
        {items: st.lists(item, max_size=4)}, optional={"scope": st.fixed_dictionaries({"name": words})}
    )
    resource = st.fixed_dictionaries(
        {scopes: st.lists(scope, max_size=2)}, optional={"resource": st.fixed_dictionaries({"attributes": attributes})}
    )
    return st.fixed_dictionaries({resources: st.lists(resource, max_size=2)})


_MARK = "\ufffc"  # stands for a lone surrogate while protobuf, which refuses one, builds the message


def _rewrite(doc: Any, on_bytes: Any, on_text: Any) -> Any:
    """`doc` with every bytes value and every string (keys too) rewritten."""
    if isinstance(doc, bytes):
        return on_bytes(doc)
    if isinstance(doc, str):
        return on_text(doc)
    if isinstance(doc, dict):
        return {on_text(k): _rewrite(v, on_bytes, on_text) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_rewrite(v, on_bytes, on_text) for v in doc]
    return doc


def protobuf_body(doc: dict[str, Any], signal: str) -> bytes:
    """The request as protobuf; a lone surrogate becomes the invalid UTF-8 a lax encoder writes for it."""
    message = (
        trace_service_pb2.ExportTraceServiceRequest()
        if signal == "traces"
        else logs_service_pb2.ExportLogsServiceRequest()
    )
    marked = _rewrite(
        doc,
        lambda b: base64.b64encode(b).decode(),
        lambda t: "".join(_MARK if 0xD800 <= ord(c) <= 0xDFFF else c for c in t),
    )
    json_format.ParseDict(marked, message)
    return message.SerializeToString().replace(_MARK.encode(), "\ud800".encode("utf-8", "surrogatepass"))


def json_body(doc: dict[str, Any], ascii_only: bool) -> bytes:
    """The request as OTLP JSON (ids as hex); lone surrogates as escapes, or as raw (invalid) UTF-8."""
    hex_ids = _rewrite(doc, bytes.hex, lambda t: t)
    return json.dumps(hex_ids, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


# --- damaging them ------------------------------------------------------------------------------


@st.composite
def damaged_doc(draw: st.DrawFn, signal: str) -> dict[str, Any]:
    """A request document with a few of its values (at any depth) replaced by arbitrary JSON."""
    doc = copy.deepcopy(draw(request(signal)))  # damage a copy: Hypothesis may hand the same value out again
    for _ in range(draw(st.integers(0, 3))):
        containers = list(_containers(doc))
        parent, key = draw(st.sampled_from(containers)) if containers else (doc, "x")
        parent[key] = draw(any_json | st.builds(_deep_list) | st.just(-1) | st.just("\ud800"))
    return doc


def _containers(node: Any) -> Iterator[tuple[Any, Any]]:
    stack = [node]
    while stack:
        current = stack.pop()
        pairs = (
            current.items() if isinstance(current, dict) else enumerate(current) if isinstance(current, list) else ()
        )
        for key, value in pairs:
            yield current, key
            stack.append(value)


@st.composite
def damaged_bytes(draw: st.DrawFn, body: bytes) -> bytes:
    """`body` with bytes flipped, cut or inserted (or left whole)."""
    data = bytearray(body)
    for _ in range(draw(st.integers(0, 4))):
        operation = draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if operation == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif operation == "cut":
            del data[at : at + draw(st.integers(1, 8))]
        elif operation == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at:]
    return bytes(data)


@st.composite
def protobuf_input(draw: st.DrawFn, signal: str) -> bytes:
    return draw(damaged_bytes(protobuf_body(draw(request(signal)), signal)))


@st.composite
def json_input(draw: st.DrawFn, signal: str) -> bytes:
    body = json_body(draw(damaged_doc(signal)), draw(st.booleans()))
    return draw(damaged_bytes(body)) if draw(st.booleans()) else body


def _decodes_or_refuses(body: bytes, encoding: Encoding, signal: str) -> None:
    try:
        DECODERS[signal](body, encoding)
    except DecodeError as exc:
        assert str(exc)  # the refusal names its reason


# --- decode -------------------------------------------------------------------------------------

SIGNALS = pytest.mark.parametrize("signal", ["traces", "logs"])


@SIGNALS
@DECODE
@given(data=st.data())
def test_fuzz_decode_protobuf(signal: str, data: st.DataObject) -> None:
    _decodes_or_refuses(data.draw(protobuf_input(signal) | st.binary(max_size=200)), "protobuf", signal)


@SIGNALS
@DECODE
@given(data=st.data())
def test_fuzz_decode_json(signal: str, data: st.DataObject) -> None:
    _decodes_or_refuses(data.draw(json_input(signal) | st.binary(max_size=200)), "json", signal)


@DECODE
@given(doc=request("traces", clean_text))
def test_fuzz_protobuf_and_json_decode_to_the_same_spans(doc: dict[str, Any]) -> None:
    body = protobuf_body(doc, "traces")
    from_protobuf = decode_traces(body)
    from_json = decode_traces(otlp_json(body), "json")
    assert [s.read() for s in from_json.spans] == [s.read() for s in from_protobuf.spans]
    assert from_json.rejected == from_protobuf.rejected


# --- both receivers, through real clients -------------------------------------------------------


@pytest.fixture(scope="module")
def receivers() -> Iterator[InProcessReceivers]:
    running = InProcessReceivers(max_request_bytes=LIMIT)
    yield running
    assert running.metric("otelgrade_requests_total", {"result": "error"}) == 0
    running.close()


@pytest.fixture(scope="module")
def channel(receivers: InProcessReceivers) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(receivers.grpc_address) as ch:
        yield ch


def post(receivers: InProcessReceivers, body: bytes, path: str, content_type: str, gzipped: bool) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", receivers.http_port, timeout=30)
    headers = {"Content-Type": content_type, **({"Content-Encoding": "gzip"} if gzipped else {})}
    try:
        connection.request("POST", path, body=gzip.compress(body) if gzipped else body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@SIGNALS
@RECEIVE
@given(data=st.data())
def test_fuzz_http_receiver(receivers: InProcessReceivers, signal: str, data: st.DataObject) -> None:
    encoding = data.draw(st.sampled_from(["protobuf", "json"]))
    body = data.draw(protobuf_input(signal) if encoding == "protobuf" else json_input(signal))
    content_type = "application/x-protobuf" if encoding == "protobuf" else "application/json"
    status, answer = post(receivers, body, f"/v1/{signal}", content_type, data.draw(st.booleans()))
    assert status in (200, 400, 413), answer
    if encoding == "json":
        json.loads(answer)  # every answer, errors included, is a JSON document


@SIGNALS
@RECEIVE
@given(data=st.data())
def test_fuzz_grpc_receiver(channel: grpc.Channel, signal: str, data: st.DataObject) -> None:
    body = data.draw(protobuf_input(signal))
    try:
        raw_export(channel, body, "trace" if signal == "traces" else "logs")
    except grpc.RpcError as error:
        assert error.code() in GRPC_ANSWERS, error.details()


# --- the inputs that once broke the receive path --------------------------------------------------

CORPUS_FILES = sorted(p for p in CORPUS.iterdir() if p.is_file() and p.suffix in (".pb", ".json"))


def _corpus_case(path: Path) -> tuple[str, Encoding]:
    signal = "logs" if path.name.startswith("logs-") else "traces"
    return signal, "json" if path.suffix == ".json" else "protobuf"


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_fuzz_corpus_is_answered(receivers: InProcessReceivers, channel: grpc.Channel, path: Path) -> None:
    signal, encoding = _corpus_case(path)
    body = path.read_bytes()
    _decodes_or_refuses(body, encoding, signal)
    content_type = "application/x-protobuf" if encoding == "protobuf" else "application/json"
    for gzipped in (False, True):
        status, _ = post(receivers, body, f"/v1/{signal}", content_type, gzipped)
        assert status in (200, 400, 413)
    if encoding == "protobuf":
        try:
            raw_export(channel, body, "trace" if signal == "traces" else "logs")
        except grpc.RpcError as error:
            assert error.code() in GRPC_ANSWERS, error.details()
