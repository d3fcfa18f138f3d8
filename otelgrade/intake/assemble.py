"""Hold received spans and GenAI log events per trace until the trace is complete, then hand it on.

Pure and clock-injected: the caller passes `now` (seconds, any monotonic clock) to every call and
calls `poll` once `next_deadline` has come (`on_deadline` tells it after each batch); nothing here sleeps,
spawns tasks or takes locks (call it from one thread).

A trace is complete once its root span (no parent) has arrived and nothing has arrived for
`settle`. Without a root it closes after `idle_timeout` of quiet, and any trace closes
`max_trace_duration` after its first item. Memory is bounded: when `max_traces` traces are held,
a new trace closes the oldest one early (reason `evicted`; it is still graded, so nothing is lost
silently and ingest is never refused), and items beyond `max_spans_per_trace` are dropped and
counted. Items for a trace that already closed are counted as late, not graded again; a bounded
cache remembers recently closed trace ids (a spool restores it after a restart). With `keep_closed` (a
suite re-grades runs), the last `regrade_traces` closed traces keep their items: late items for one of
them open it again, and it closes as its next revision, holding every item. Deadlines live in
one heap with lazy deletion. Each item counts the bytes it came in (its share of its request's body) plus
what holding it costs (`ITEM_OVERHEAD`, and `TRACE_OVERHEAD` per trace), so the server can bound memory in bytes;
closed traces kept for late items are bounded in bytes too (`max_kept_bytes`).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import AssemblySettings
from otelgrade.core.spans import AnySpan, LogEvent

Reason = Literal["complete", "idle", "max_duration", "evicted", "shutdown"]

# What holding costs beyond the received bytes, measured as RSS with tiny spans (CPython 3.11, 64-bit): a span's
# record, its id in the trace's set and its list slot; a trace's record, lists, set, dict entry and heap entry.
ITEM_OVERHEAD = 420
TRACE_OVERHEAD = 600


@dataclass(slots=True)
class CompletedTrace:
    trace_id: str
    spans: list[AnySpan]
    logs: list[LogEvent]
    reason: Reason
    last_seen: float  # when the trace's last item arrived, on the assembler's clock
    nbytes: float = 0.0  # bytes received for its items
    revision: int = 1  # 2 and up: closed again after late items arrived


@dataclass(slots=True)
class AddResult:
    """What became of one batch: `rejected` maps a reason to the count of items not kept."""

    accepted: int = 0
    late: int = 0
    rejected: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Trace:
    first_seen: float
    last_seen: float
    spans: list[AnySpan] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)
    span_ids: set[str] = field(default_factory=set)
    size: int = 0  # spans + log events held
    nbytes: float = 0.0  # bytes received for them
    has_root: bool = False
    scheduled: float = 0.0  # the deadline of this trace's live heap entry
    revision: int = 1


class Assembler:
    def __init__(
        self, settings: AssemblySettings | None = None, metrics: Metrics | None = None, keep_closed: bool = False
    ) -> None:
        self.settings = settings or AssemblySettings()
        self.metrics = metrics or Metrics()
        self.keep_closed = keep_closed  # the server sets it when a suite re-grades runs on late spans
        self._traces: dict[str, _Trace] = {}  # insertion order = age, oldest first
        self._heap: list[tuple[float, str]] = []
        self._closed: OrderedDict[str, None] = OrderedDict()  # decision cache
        self._kept: OrderedDict[str, CompletedTrace] = OrderedDict()  # closed traces that late items reopen
        self._evicted: list[CompletedTrace] = []
        self._spans_held = 0
        self._bytes_held = 0.0
        self._kept_bytes = 0.0
        self.max_kept_bytes = float("inf")  # the server sets a share of `limits.max_bytes_held`
        # told `next_deadline` after each batch held (the server wakes its loop by then, rather than polling)
        self.on_deadline: Callable[[float | None], None] | None = None
        for reason in ("complete", "idle", "max_duration", "evicted", "shutdown"):
            self.metrics.traces_completed.labels(reason)  # every reason's series exists from the start

    # --- state -------------------------------------------------------------------------------

    @property
    def traces_in_flight(self) -> int:
        return len(self._traces)

    @property
    def spans_in_flight(self) -> int:
        return self._spans_held

    @property
    def bytes_in_flight(self) -> float:
        """Bytes received for the items held (each item's share of its request's body)."""
        return self._bytes_held

    @property
    def bytes_kept(self) -> float:
        """Bytes of closed traces kept for late items (a suite re-grades runs)."""
        return self._kept_bytes

    def next_deadline(self) -> float | None:
        """When `poll` may next have a trace to close (possibly earlier: the heap deletes lazily); None when
        nothing is held."""
        if self._evicted:
            return float("-inf")
        return self._heap[0][0] if self._heap else None

    def decided(self, trace_id: str) -> bool:
        """Whether the trace has closed recently (its items arriving now would be late)."""
        return trace_id in self._closed

    def remember(self, trace_ids: Iterable[str]) -> None:
        """Take these trace ids (oldest first) as already decided: a restart's restored decision cache."""
        for trace_id in trace_ids:
            self._closed[trace_id] = None
            self._closed.move_to_end(trace_id)
        while len(self._closed) > self.settings.decision_cache_size:
            self._closed.popitem(last=False)

    def reconfigure(self, settings: AssemblySettings, keep_closed: bool | None = None) -> None:
        """Apply new limits and timeouts to held traces too (the deadline heap is rebuilt); `keep_closed`, when
        given, turns keeping closed traces for late items on or off."""
        self.settings = settings
        if keep_closed is not None:
            self.keep_closed = keep_closed
        self._trim_kept()
        self._heap = []
        for trace_id, trace in self._traces.items():
            trace.scheduled = self._deadline(trace)
            self._heap.append((trace.scheduled, trace_id))
        heapq.heapify(self._heap)
        while len(self._closed) > settings.decision_cache_size:
            self._closed.popitem(last=False)
        if self.on_deadline is not None:
            self.on_deadline(self.next_deadline())

    # --- intake ------------------------------------------------------------------------------

    def add_spans(self, spans: Iterable[AnySpan], now: float, item_bytes: float = 0.0) -> AddResult:
        """Hold spans; `item_bytes` is what each one counts toward `bytes_in_flight`."""
        result = AddResult()
        rejected = result.rejected
        limit = self.settings.max_spans_per_trace
        held = item_bytes + ITEM_OVERHEAD
        touched: dict[str, _Trace] = {}
        current_id: str | None = None
        trace: _Trace | None = None
        for span in spans:
            if span.trace_id != current_id:  # a batch's spans usually come grouped by trace
                current_id = span.trace_id
                trace = self._trace_for(current_id, now)
                if trace is not None:
                    touched[current_id] = trace
            if trace is None:
                result.late += 1
            elif span.span_id in trace.span_ids:
                rejected["duplicate_span_id"] = rejected.get("duplicate_span_id", 0) + 1
            elif trace.size >= limit:
                rejected["trace_too_large"] = rejected.get("trace_too_large", 0) + 1
            else:
                trace.span_ids.add(span.span_id)
                trace.spans.append(span)
                trace.size += 1
                trace.nbytes += held
                if span.parent_id is None:
                    trace.has_root = True
                result.accepted += 1
        self._held(touched, now, result, held)
        m = self.metrics
        for reason, count in rejected.items():
            m.spans_rejected.labels(reason).inc(count)
        return result

    def add_logs(self, events: Iterable[LogEvent], now: float, item_bytes: float = 0.0) -> AddResult:
        """Hold GenAI log events; `item_bytes` is what each one counts toward `bytes_in_flight`."""
        result = AddResult()
        rejected = result.rejected
        limit = self.settings.max_spans_per_trace
        held = item_bytes + ITEM_OVERHEAD
        touched: dict[str, _Trace] = {}
        for event in events:
            trace = self._trace_for(event.trace_id, now)
            if trace is None:
                result.late += 1
                continue
            touched[event.trace_id] = trace
            if trace.size >= limit:
                rejected["trace_too_large"] = rejected.get("trace_too_large", 0) + 1
                continue
            trace.logs.append(event)
            trace.size += 1
            trace.nbytes += held
            result.accepted += 1
        self._held(touched, now, result, held)
        m = self.metrics
        for reason, count in rejected.items():
            m.log_records_dropped.labels(reason).inc(count)
        if result.late:
            m.log_records_dropped.labels("late").inc(result.late)
        return result

    def _held(self, touched: dict[str, _Trace], now: float, result: AddResult, held: float) -> None:
        """Account for one batch added (`held`: bytes per item): deadlines, what is held, late arrivals, gauges."""
        self._touch(touched, now)
        self._spans_held += result.accepted
        self._bytes_held += result.accepted * held
        if result.late:
            self.metrics.late_spans.inc(result.late)
        self._update_gauges()
        if self.on_deadline is not None:
            self.on_deadline(self.next_deadline())

    def _trace_for(self, trace_id: str, now: float) -> _Trace | None:
        """The held trace, a new one, or None when the trace was already decided (late)."""
        trace = self._traces.get(trace_id)
        if trace is not None:
            return trace
        kept = self._kept.pop(trace_id, None)
        if kept is None and trace_id in self._closed:
            return None
        if kept is not None:
            self._kept_bytes = max(0.0, self._kept_bytes - kept.nbytes) if self._kept else 0.0
        while len(self._traces) >= self.settings.max_traces:
            oldest = next(iter(self._traces))
            self._evicted.append(self._close(oldest, "evicted"))
        trace = _Trace(first_seen=now, last_seen=now, nbytes=TRACE_OVERHEAD)
        self._bytes_held += TRACE_OVERHEAD
        if kept is not None:
            self._reopen(trace, kept)
        self._traces[trace_id] = trace
        trace.scheduled = self._deadline(trace)
        heapq.heappush(self._heap, (trace.scheduled, trace_id))
        return trace

    def _reopen(self, trace: _Trace, kept: CompletedTrace) -> None:
        """Hold a closed trace's items again, as its next revision (copies: the grading thread may be reading the
        closed revision's lists)."""
        trace.spans, trace.logs, trace.revision = list(kept.spans), list(kept.logs), kept.revision + 1
        trace.span_ids = {span.span_id for span in kept.spans}
        trace.has_root = any(span.parent_id is None for span in kept.spans)
        trace.size = len(kept.spans) + len(kept.logs)
        trace.nbytes = kept.nbytes  # its overhead included
        self._spans_held += trace.size
        self._bytes_held += kept.nbytes - TRACE_OVERHEAD

    def _touch(self, touched: dict[str, _Trace], now: float) -> None:
        """Record activity once per trace per batch. Later activity only moves a deadline later, which
        `poll` discovers lazily; a root's arrival can move it earlier, and only then is a heap entry added."""
        traces = self._traces
        for trace_id, trace in touched.items():
            if traces.get(trace_id) is not trace:
                continue  # evicted while this batch was being added
            trace.last_seen = now
            deadline = self._deadline(trace)
            if deadline < trace.scheduled:
                trace.scheduled = deadline
                heapq.heappush(self._heap, (deadline, trace_id))

    def _deadline(self, trace: _Trace) -> float:
        s = self.settings
        quiet = s.settle if trace.has_root else s.idle_timeout
        return min(trace.last_seen + quiet, trace.first_seen + s.max_trace_duration)

    # --- output ------------------------------------------------------------------------------

    def poll(self, now: float) -> list[CompletedTrace]:
        """Every trace whose deadline has passed (and any evicted since the last poll)."""
        done, self._evicted = self._evicted, []
        heap = self._heap
        while heap and heap[0][0] <= now:
            deadline, trace_id = heapq.heappop(heap)
            trace = self._traces.get(trace_id)
            if trace is None or deadline != trace.scheduled:
                continue  # closed already, or superseded by an earlier entry
            actual = self._deadline(trace)
            if actual > now:
                trace.scheduled = actual
                heapq.heappush(heap, (actual, trace_id))
                continue
            done.append(self._close(trace_id, self._reason(trace, now)))
        if done:
            self._update_gauges()
        return done

    def drain(self) -> list[CompletedTrace]:
        """Close every held trace (reason `shutdown`), oldest first."""
        done, self._evicted = self._evicted, []
        done.extend(self._close(trace_id, "shutdown") for trace_id in list(self._traces))
        self._heap = []
        self._update_gauges()
        return done

    def _reason(self, trace: _Trace, now: float) -> Reason:
        s = self.settings
        if now >= trace.first_seen + s.max_trace_duration:
            return "max_duration"
        return "complete" if trace.has_root else "idle"

    def _close(self, trace_id: str, reason: Reason) -> CompletedTrace:
        trace = self._traces.pop(trace_id)
        self._spans_held -= trace.size
        self._bytes_held = max(0.0, self._bytes_held - trace.nbytes) if self._traces else 0.0  # no float drift
        self._closed[trace_id] = None
        if len(self._closed) > self.settings.decision_cache_size:
            self._closed.popitem(last=False)
        self.metrics.traces_completed.labels(reason).inc()
        t = trace
        closed = CompletedTrace(trace_id, t.spans, t.logs, reason, t.last_seen, t.nbytes, t.revision)
        if self.keep_closed and self.settings.regrade_traces:
            self._kept[trace_id] = closed
            self._kept_bytes += closed.nbytes
            self._trim_kept()
        return closed

    def _trim_kept(self) -> None:
        """Forget the oldest kept closed traces past `regrade_traces` or `max_kept_bytes`."""
        most = self.settings.regrade_traces if self.keep_closed else 0
        while self._kept and (len(self._kept) > most or self._kept_bytes > self.max_kept_bytes):
            _, dropped = self._kept.popitem(last=False)
            self._kept_bytes = max(0.0, self._kept_bytes - dropped.nbytes) if self._kept else 0.0

    def _update_gauges(self) -> None:
        self.metrics.traces_in_flight.set(len(self._traces))
        self.metrics.spans_in_flight.set(self._spans_held)
