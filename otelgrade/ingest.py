"""Ingest: what happens to a received export request. Decode it, hand its records to the assembler,
count the batch in metrics, and say what was refused. Receivers call it through `receivers.Ingest`.

Metrics are updated once per request. `otelgrade_spans_received_total` counts the spans that
decoded into records; spans cut later (bad ids, duplicates, over the per-trace limit) are counted
in `otelgrade_spans_rejected_total{reason}` as well.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TypeVar

from otelgrade.assemble import Assembler
from otelgrade.decode import DecodedLogs, DecodedTraces, DecodeError, decode_logs, decode_traces
from otelgrade.metrics import Metrics
from otelgrade.receivers import Encoding, ExportResult, InvalidRequest, Overloaded, Signal

_T = TypeVar("_T")

# Bodies above this size are decoded on a worker thread so that one large request does not hold
# up the event loop's other connections; small ones are cheaper to decode in place.
OFFLOAD_BYTES = 512 * 1024


def _describe(rejected: dict[str, int], noun: str) -> str:
    total = sum(rejected.values())
    reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(rejected.items()) if count)
    return f"{total} {noun} rejected ({reasons})"


class Ingest:
    """Turns request bodies into assembler input (the receivers' `Ingest`). Call it from the event loop's thread."""

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

    async def export(self, signal: Signal, body: bytes, encoding: Encoding, protocol: str) -> ExportResult:
        """Decode and keep one request; raises `InvalidRequest` if the payload as a whole is unusable
        and `Overloaded` while `busy()` says senders should retry later."""
        if self.busy():
            raise Overloaded("grading is behind; retry later")
        try:
            if signal == "traces":
                traces = await self._decode(decode_traces, body, encoding)
                return self._keep_spans(traces, protocol)
            logs = await self._decode(decode_logs, body, encoding)
        except DecodeError as exc:
            raise InvalidRequest(str(exc)) from exc
        return self._keep_logs(logs, protocol)

    async def _decode(self, decode: Callable[[bytes, Encoding], _T], body: bytes, encoding: Encoding) -> _T:
        if len(body) < OFFLOAD_BYTES:
            return decode(body, encoding)
        return await asyncio.get_running_loop().run_in_executor(self._executor, decode, body, encoding)

    def _keep_spans(self, decoded: DecodedTraces, protocol: str) -> ExportResult:
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

    def _keep_logs(self, decoded: DecodedLogs, protocol: str) -> ExportResult:
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


def _outcome(rejected: dict[str, int], warnings: list[str], noun: str) -> ExportResult:
    count = sum(rejected.values())
    parts = ([_describe(rejected, noun)] if count else []) + warnings
    return ExportResult(count, "; ".join(parts))
