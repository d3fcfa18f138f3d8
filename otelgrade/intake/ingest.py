"""Ingest: what happens to a received export request. Decode it, write it to the spool (when durability is
on) before keeping it, hand its records to the assembler, count the batch in metrics, and say what was
refused. Receivers call it through `receivers.Ingest`; at start-up the server replays the spool through it.

Memory is bounded in bytes: request bodies being received count toward `max_bytes_receiving` as they
arrive until they are kept (past it: `Overloaded`), and each kept item counts its share of its
request's body in the assembler.

Metrics are updated once per request. `otelgrade_spans_received_total` counts the spans that
decoded into records; spans cut later (bad ids, duplicates, over the per-trace limit) are counted
in `otelgrade_spans_rejected_total{reason}` as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Container, Iterator
from concurrent.futures import Executor
from typing import TypeVar

from otelgrade.core.metrics import Metrics
from otelgrade.core.spans import LogEvent, ReceivedSpan
from otelgrade.intake.assemble import Assembler
from otelgrade.intake.decode import DecodedLogs, DecodedTraces, DecodeError, decode_logs, decode_traces
from otelgrade.intake.receivers import Encoding, ExportResult, InvalidRequest, Overloaded, Signal, receiver_types
from otelgrade.intake.spool import Record, Spool

log = logging.getLogger(__name__)

_T = TypeVar("_T")

# Bodies above this size are decoded on a worker thread so that one large request does not hold
# up the event loop's other connections; small ones are cheaper to decode in place.
OFFLOAD_BYTES = 512 * 1024


def _describe(rejected: dict[str, int], noun: str) -> str:
    total = sum(rejected.values())
    reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(rejected.items()) if count)
    return f"{total} {noun} rejected ({reasons})"


class Receiving:
    """The bytes of request bodies being received at once, bounded by `max_bytes_receiving`, split fairly: while
    the allowance is full, a sender may still take up to its share of it (the allowance / the senders receiving,
    itself included), so many slow senders cannot keep a small one out; one over its share is refused while the
    allowance is full. Shares taken while it is full never bring the total past twice the allowance."""

    def __init__(self, metrics: Metrics, max_bytes_receiving: int) -> None:
        self.metrics = metrics
        self.max_bytes_receiving = max_bytes_receiving
        self._receiving = 0
        self._senders: dict[object, int] = {}  # what each sender receiving now holds (by its id)

    def fits(self, nbytes: int, sender: object = None) -> bool:
        """Whether `nbytes` more may be received now for `sender`: within `max_bytes_receiving`, or nothing else
        is, or within the sender's fair share (and twice the allowance)."""
        allowance = self.max_bytes_receiving
        if not self._receiving or self._receiving + nbytes <= allowance:
            return True
        held = self._senders.get(id(sender), 0) if sender is not None else 0
        senders = len(self._senders) + (held == 0)
        return held + nbytes <= allowance / senders and self._receiving + nbytes <= 2 * allowance

    @contextlib.contextmanager
    def receiving(self, nbytes: int, sender: object = None) -> Iterator[None]:
        """Count `nbytes` of a request body as being received for `sender` during the block (None: a sender of its
        own); raises `Overloaded` when they would not `fit`. Receivers count a body as it arrives, piece by piece,
        for the request it belongs to."""
        if not self.fits(nbytes, sender):
            raise Overloaded("too many bytes are being received at once; retry later")
        key: object = object() if sender is None else id(sender)  # requests are not hashable; each lives this long
        self._senders[key] = self._senders.get(key, 0) + nbytes
        self._receiving += nbytes
        self.metrics.bytes_receiving.set(self._receiving)
        try:
            yield
        finally:
            self._receiving -= nbytes
            if (left := self._senders[key] - nbytes) > 0:
                self._senders[key] = left
            else:
                del self._senders[key]
            self.metrics.bytes_receiving.set(self._receiving)


class Ingest(Receiving):
    """Turns request bodies into assembler input (the receivers' `Ingest`). Call it from the event loop's thread."""

    def __init__(
        self,
        assembler: Assembler,
        metrics: Metrics,
        max_request_bytes: int,
        clock: Callable[[], float] = time.monotonic,
        decode_executor: Executor | None = None,
        busy: Callable[[], bool] = lambda: False,
        max_bytes_receiving: int = 256 * 1024 * 1024,
        spool: Spool | None = None,
        body_read_timeout: float = 30.0,
    ) -> None:
        super().__init__(metrics, max_bytes_receiving)  # the server changes max_bytes_receiving on reload
        self.assembler = assembler
        self.max_request_bytes = max_request_bytes  # and this
        self.body_read_timeout = body_read_timeout
        self.clock = clock
        self._executor = decode_executor
        self.busy = busy  # true while the server wants senders to back off
        self.spool = spool
        # turn records (body, signature), for the conversations' holder
        self.on_turns: Callable[[list[tuple[str, str]]], None] | None = None
        for protocol in receiver_types():  # each receiver's series at 0, so rate() and absent() work from the start
            metrics.spans_received.labels(protocol)
            metrics.log_records_received.labels(protocol)

    async def export(self, signal: Signal, body: bytes, encoding: Encoding, protocol: str) -> ExportResult:
        """Decode and keep one request (on disk first, with a spool); raises `InvalidRequest` if the payload as
        a whole is unusable and `Overloaded` while `busy()` says senders should retry later, or when the spool
        cannot write it."""
        if self.busy():
            raise Overloaded("otelgrade is holding as much as it may; retry later")
        try:
            decoded = await self._decode(_decoder(signal), body, encoding)
        except DecodeError as exc:
            raise InvalidRequest(str(exc)) from exc
        if self.spool is not None:
            trace_ids = {item.trace_id for item in _items(decoded)}
            undecided = [t for t in trace_ids if not self.assembler.decided(t)]
            try:
                await self.spool.append(Record(signal, encoding, body), undecided)
            except OSError as exc:  # the spool logs the first refusal and the recovery, not each request
                raise Overloaded(f"cannot keep the request durably ({exc.strerror or exc}); retry later") from exc
        return self._keep(decoded, _share(decoded, len(body)), protocol)

    def replay(self, record: Record, graded: Container[str]) -> set[str]:
        """Keep a spooled request again at start-up, without the traces in `graded`; the trace ids kept."""
        try:
            decoded = _decoder(record.signal)(record.body, record.encoding)
        except DecodeError as exc:
            log.error("a spooled %s request no longer decodes, skipped: %s", record.signal, exc)
            return set()
        share = _share(decoded, len(record.body))
        if isinstance(decoded, DecodedTraces):
            decoded.spans = [s for s in decoded.spans if s.trace_id not in graded]
        else:
            decoded.events = [e for e in decoded.events if e.trace_id not in graded]
        self._keep(decoded, share, "spool")
        return {item.trace_id for item in _items(decoded)}

    def _keep(self, decoded: DecodedTraces | DecodedLogs, item_bytes: float, protocol: str) -> ExportResult:
        if isinstance(decoded, DecodedTraces):
            return self._keep_spans(decoded, protocol, item_bytes)
        return self._keep_logs(decoded, protocol, item_bytes)

    async def _decode(self, decode: Callable[[bytes, Encoding], _T], body: bytes, encoding: Encoding) -> _T:
        if len(body) < OFFLOAD_BYTES:
            return decode(body, encoding)
        return await asyncio.get_running_loop().run_in_executor(self._executor, decode, body, encoding)

    def _keep_spans(self, decoded: DecodedTraces, protocol: str, item_bytes: float) -> ExportResult:
        m = self.metrics
        if decoded.spans:
            m.spans_received.labels(protocol).inc(len(decoded.spans))
        for reason, count in decoded.rejected.items():
            m.spans_rejected.labels(reason).inc(count)
        added = self.assembler.add_spans(decoded.spans, self.clock(), item_bytes)
        return _outcome(decoded.rejected, added.rejected, decoded.warnings, "spans")

    def _keep_logs(self, decoded: DecodedLogs, protocol: str, item_bytes: float) -> ExportResult:
        m = self.metrics
        if decoded.received:
            m.log_records_received.labels(protocol).inc(decoded.received)
        for reasons in (decoded.dropped, decoded.rejected):
            for reason, count in reasons.items():
                m.log_records_dropped.labels(reason).inc(count)
        added = self.assembler.add_logs(decoded.events, self.clock(), item_bytes)
        if decoded.turns:
            m.turn_records.labels("received").inc(len(decoded.turns))
            if self.on_turns is not None:
                self.on_turns(decoded.turns)
            else:
                m.log_records_dropped.labels("turn_record_unused").inc(len(decoded.turns))
        return _outcome(decoded.rejected, added.rejected, decoded.warnings, "log records")


def _decoder(signal: Signal) -> Callable[[bytes, Encoding], DecodedTraces | DecodedLogs]:
    return decode_traces if signal == "traces" else decode_logs


def _share(decoded: DecodedTraces | DecodedLogs, nbytes: int) -> float:
    """What each decoded item counts toward the bytes held: its share of the request's body."""
    count = len(decoded.spans) if isinstance(decoded, DecodedTraces) else decoded.received
    return nbytes / max(1, count)


def _items(decoded: DecodedTraces | DecodedLogs) -> list[ReceivedSpan] | list[LogEvent]:
    return decoded.spans if isinstance(decoded, DecodedTraces) else decoded.events


def _outcome(decoding: dict[str, int], holding: dict[str, int], warnings: list[str], noun: str) -> ExportResult:
    """The answer to one request: what decoding and then holding refused, by reason, and any warnings."""
    rejected = dict(decoding)
    for reason, count in holding.items():
        rejected[reason] = rejected.get(reason, 0) + count
    count = sum(rejected.values())
    parts = ([_describe(rejected, noun)] if count else []) + warnings
    return ExportResult(count, "; ".join(parts))
