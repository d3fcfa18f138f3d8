"""Run the OTLP receivers in-process (their own event loop on a thread) and build OTLP requests for tests."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import AssemblySettings
from otelgrade.intake.assemble import Assembler, CompletedTrace
from otelgrade.intake.ingest import Ingest
from otelgrade.intake.receivers import receiver_types

T = TypeVar("T")

TRACE = bytes.fromhex("5b8efff798038103d269b633813fc60c")


def sid(n: int) -> bytes:
    return n.to_bytes(8, "big")


def kv(key: str, value: str) -> common_pb2.KeyValue:
    return common_pb2.KeyValue(key=key, value=common_pb2.AnyValue(string_value=value))


def span_pb(
    span_id: bytes, parent: bytes = b"", trace_id: bytes = TRACE, name: str = "step", **attrs: str
) -> trace_pb2.Span:
    """A span; a root span is an agent's invocation (GenAI `invoke_agent`), so that a trace of them is a run."""
    if not parent:
        attrs = {"gen_ai.operation.name": "invoke_agent", **attrs}
    return trace_pb2.Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_time_unix_nano=1_700_000_000_000_000_000,
        end_time_unix_nano=1_700_000_001_000_000_000,
        attributes=[kv(k, v) for k, v in attrs.items()],
    )


def traces_request(spans: Sequence[trace_pb2.Span], service: str = "test-agent") -> bytes:
    request = trace_service_pb2.ExportTraceServiceRequest(
        resource_spans=[
            trace_pb2.ResourceSpans(
                resource=resource_pb2.Resource(attributes=[kv("service.name", service)]),
                scope_spans=[trace_pb2.ScopeSpans(spans=list(spans))],
            )
        ]
    )
    return request.SerializeToString()


def log_pb(event_name: str, span_id: bytes, trace_id: bytes = TRACE, content: str = "hello") -> logs_pb2.LogRecord:
    body = common_pb2.AnyValue(kvlist_value=common_pb2.KeyValueList(values=[kv("content", content)]))
    return logs_pb2.LogRecord(
        time_unix_nano=1_700_000_000_500_000_000,
        trace_id=trace_id,
        span_id=span_id,
        event_name=event_name,
        body=body,
    )


def logs_request(records: Sequence[logs_pb2.LogRecord]) -> bytes:
    request = logs_service_pb2.ExportLogsServiceRequest(
        resource_logs=[logs_pb2.ResourceLogs(scope_logs=[logs_pb2.ScopeLogs(log_records=list(records))])]
    )
    return request.SerializeToString()


def otlp_json(body: bytes, signal: str = "traces") -> bytes:
    """An encoded protobuf export request as OTLP JSON (protobuf's JSON mapping, with ids as hex)."""
    if signal == "traces":
        doc = json_format.MessageToDict(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
        resources, scopes, items = "resourceSpans", "scopeSpans", "spans"
    else:
        doc = json_format.MessageToDict(logs_service_pb2.ExportLogsServiceRequest.FromString(body))
        resources, scopes, items = "resourceLogs", "scopeLogs", "logRecords"
    for resource in doc.get(resources, []):
        for scope in resource.get(scopes, []):
            for item in scope.get(items, []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        item[key] = base64.b64decode(item[key]).hex()
    return json.dumps(doc).encode()


class InProcessReceivers:
    """Both receivers and an assembler on a private event loop; `held()` drains what was kept."""

    def __init__(self, max_request_bytes: int = 1024 * 1024) -> None:
        self.metrics = Metrics()
        self.assembler = Assembler(AssemblySettings(), self.metrics)
        self.max_request_bytes = max_request_bytes
        self.busy = False  # set to make the receivers ask senders to back off
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.grpc_port, self.http_port = self.run(self._start)

    async def _start(self) -> tuple[int, int]:
        ingest = Ingest(self.assembler, self.metrics, self.max_request_bytes, busy=lambda: self.busy)
        types = receiver_types()
        self._grpc = types["grpc"].factory("127.0.0.1:0", ingest)
        self._http = types["http"].factory("127.0.0.1:0", ingest)
        return await self._grpc.start(), await self._http.start()

    def run(self, coroutine: Callable[[], Any]) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine(), self.loop)
        return future.result(timeout=30)

    def call(self, function: Callable[[], T]) -> T:
        async def wrapper() -> T:
            return function()

        result: T = self.run(wrapper)
        return result

    def held(self) -> dict[str, CompletedTrace]:
        return {t.trace_id: t for t in self.call(self.assembler.drain)}

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float:
        return self.metrics.registry.get_sample_value(name, labels or {}) or 0.0

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def close(self) -> None:
        async def stop() -> None:
            await self._grpc.stop()
            await self._http.stop()

        self.run(stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
