"""What both OTLP receivers share: decode an export request, hand its records to the assembler,
count the batch in metrics, and say what was refused. Also the capped gzip reader.

Metrics are updated once per request. `otelgrade_spans_received_total` counts the spans that
decoded into records; spans cut later (bad ids, duplicates, over the per-trace limit) are counted
in `otelgrade_spans_rejected_total{reason}` as well.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Literal, TypeVar

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.assemble import Assembler
from otelgrade.decode import DecodedLogs, DecodedTraces, Encoding, decode_logs, decode_traces
from otelgrade.metrics import Metrics

Signal = Literal["traces", "logs"]
_T = TypeVar("_T")

# Bodies above this size are decoded on a worker thread so that one large request does not hold
# up the event loop's other connections; small ones are cheaper to decode in place.
OFFLOAD_BYTES = 512 * 1024
_GZIP_CHUNK = 64 * 1024


RETRY_AFTER_SECONDS = 2


class Overloaded(RuntimeError):
    """Grading has fallen behind; the request is refused as retryable (HTTP 503, gRPC UNAVAILABLE)."""


class RequestTooLarge(ValueError):
    """The payload (or what it decompresses to) is over `receivers.max_request_bytes`."""


@dataclass(slots=True, frozen=True)
class Outcome:
    """One export request's answer: `rejected` items were not kept; `message` explains (or warns)."""

    rejected: int = 0
    message: str = ""


def _describe(rejected: dict[str, int], noun: str) -> str:
    total = sum(rejected.values())
    reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(rejected.items()) if count)
    return f"{total} {noun} rejected ({reasons})"


class Ingest:
    """Turns request bodies into assembler input. Call it from the event loop's thread only."""

    def __init__(
        self,
        assembler: Assembler,
        metrics: Metrics,
        max_request_bytes: int,
        clock: Callable[[], float] = time.monotonic,
        decode_executor: Executor | None = None,
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.assembler = assembler
        self.metrics = metrics
        self.max_request_bytes = max_request_bytes  # the server changes it on reload
        self.clock = clock
        self._executor = decode_executor
        self.busy = busy  # true while the server wants senders to back off
        for protocol in ("grpc", "http"):  # export the series at 0 so rate() and absent() work from the start
            metrics.spans_received.labels(protocol)
            metrics.log_records_received.labels(protocol)

    async def export(self, signal: Signal, body: bytes, encoding: Encoding, protocol: str) -> Outcome:
        """Decode and keep one request; raises `decode.DecodeError` if the payload as a whole is unusable
        and `Overloaded` while `busy()` says senders should retry later."""
        if self.busy():
            raise Overloaded("grading is behind; retry later")
        if signal == "traces":
            traces = await self._decode(decode_traces, body, encoding)
            return self._keep_spans(traces, protocol)
        logs = await self._decode(decode_logs, body, encoding)
        return self._keep_logs(logs, protocol)

    async def _decode(self, decode: Callable[[bytes, Encoding], _T], body: bytes, encoding: Encoding) -> _T:
        if len(body) < OFFLOAD_BYTES:
            return decode(body, encoding)
        return await asyncio.get_running_loop().run_in_executor(self._executor, decode, body, encoding)

    def _keep_spans(self, decoded: DecodedTraces, protocol: str) -> Outcome:
        m = self.metrics
        if decoded.spans:
            m.spans_received.labels(protocol).inc(len(decoded.spans))
        for reason, count in decoded.rejected.items():
            m.spans_rejected.labels(reason).inc(count)
        added = self.assembler.add_spans(decoded.spans, self.clock())
        rejected = dict(decoded.rejected)
        for reason, count in added.rejected.items():
            rejected[reason] = rejected.get(reason, 0) + count
        return _outcome(rejected, decoded.warnings, "spans")

    def _keep_logs(self, decoded: DecodedLogs, protocol: str) -> Outcome:
        m = self.metrics
        if decoded.received:
            m.log_records_received.labels(protocol).inc(decoded.received)
        for reasons in (decoded.dropped, decoded.rejected):
            for reason, count in reasons.items():
                m.log_records_dropped.labels(reason).inc(count)
        added = self.assembler.add_logs(decoded.events, self.clock())
        rejected = dict(decoded.rejected)
        for reason, count in added.rejected.items():
            rejected[reason] = rejected.get(reason, 0) + count
        return _outcome(rejected, decoded.warnings, "log records")


def export_response(signal: Signal, outcome: Outcome) -> Message:
    """The ExportTraceServiceResponse / ExportLogsServiceResponse for an outcome (partial success if any)."""
    if signal == "traces":
        traces = trace_service_pb2.ExportTraceServiceResponse()
        if outcome.rejected or outcome.message:
            traces.partial_success.rejected_spans = outcome.rejected
            traces.partial_success.error_message = outcome.message
        return traces
    logs = logs_service_pb2.ExportLogsServiceResponse()
    if outcome.rejected or outcome.message:
        logs.partial_success.rejected_log_records = outcome.rejected
        logs.partial_success.error_message = outcome.message
    return logs


def split_address(address: str) -> tuple[str, int]:
    """`host:port` (also `[::1]:4317`, `:4317`) -> (host, port); raises ValueError when unusable."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


def _outcome(rejected: dict[str, int], warnings: list[str], noun: str) -> Outcome:
    count = sum(rejected.values())
    parts = ([_describe(rejected, noun)] if count else []) + warnings
    return Outcome(count, "; ".join(parts))


def gunzip_capped(data: bytes, limit: int) -> bytes:
    """Decompress a gzip body, refusing (without inflating it all) output larger than `limit`."""
    out = bytearray()
    pending = data
    while pending:  # one pass per gzip member; concatenated members are valid gzip
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while True:
            chunk = inflater.decompress(pending, _GZIP_CHUNK)
            out += chunk
            if len(out) > limit:
                raise RequestTooLarge(f"the decompressed body is over the {limit}-byte limit")
            pending = inflater.unconsumed_tail
            if inflater.eof:
                pending = inflater.unused_data
                break
            if not chunk and not pending:
                raise zlib.error("truncated gzip stream")
    return bytes(out)
