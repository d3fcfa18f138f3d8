"""Spans as received: the ids assembly needs up front, every other field read only when the run is rebuilt."""

from __future__ import annotations

from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from otelgrade.core.spans import ReceivedSpan, any_value, attributes


def kv(key: str, **value: object) -> common_pb2.KeyValue:
    return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(**value))  # type: ignore[arg-type]


def test_a_received_span_reads_every_field_from_its_bytes() -> None:
    message = trace_pb2.Span(
        name="execute_tool search",
        start_time_unix_nano=1,
        end_time_unix_nano=5,
        attributes=[kv("gen_ai.tool.name", string_value="search")],
        events=[trace_pb2.Span.Event(name="gen_ai.choice", time_unix_nano=3)],
        status=trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR, message="boom"),
    )
    received = ReceivedSpan("a" * 32, "b" * 16, None, message.SerializeToString(), {"service.name": "svc"})
    span = received.read()
    assert (span.name, span.start_ns, span.end_ns, span.status_message) == ("execute_tool search", 1, 5, "boom")
    assert span.attributes == {"gen_ai.tool.name": "search"}
    assert [e.name for e in span.events] == ["gen_ai.choice"]
    assert span.resource == {"service.name": "svc"}


def test_attribute_values_of_every_kind_read_as_python_values() -> None:
    nested = common_pb2.KeyValueList(values=[kv("k", int_value=2)])
    values = [
        kv("s", string_value=""),
        kv("i", int_value=7),
        kv("b", bool_value=True),
        kv("d", double_value=0.5),
        kv("a", array_value=common_pb2.ArrayValue(values=[common_pb2.AnyValue(string_value="x")])),
        kv("m", kvlist_value=nested),
        kv("raw", bytes_value=b"\x00\x01"),
        common_pb2.KeyValue(key="unset"),
    ]
    assert attributes(values) == {
        "s": "",
        "i": 7,
        "b": True,
        "d": 0.5,
        "a": ["x"],
        "m": {"k": 2},
        "raw": "AAE=",
        "unset": None,
    }
    assert any_value(common_pb2.AnyValue(string_value="hi")) == "hi"
