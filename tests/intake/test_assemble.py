"""The assembler on a fake clock: when traces close, what they hold, and what is cut and counted."""

from __future__ import annotations

import random

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import AssemblySettings as Assembly
from otelgrade.core.spans import Event, LogEvent, Span
from otelgrade.intake.assemble import Assembler
from otelgrade.intake.decode import spans_from_request

TRACE_A = "0af7651916cd43dd8448eb211c80319c"
TRACE_B = "4bf92f3577b34da6a3ce929d0e0e4736"


def span(trace_id: str, span_id: str, parent: str | None = None) -> Span:
    return Span(trace_id, span_id, parent, f"span {span_id}", 1, 0, 1, 0, "", {}, [], {})


def log_event(trace_id: str, span_id: str, name: str = "gen_ai.user.message") -> LogEvent:
    return LogEvent(trace_id, span_id, Event(name, 0, {}, {"content": "hi"}))


def value(metrics: Metrics, name: str, labels: dict[str, str] | None = None) -> float:
    return metrics.registry.get_sample_value(name, labels or {}) or 0.0


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


def make(metrics: Metrics, **settings: float) -> Assembler:
    defaults: dict[str, float] = {"settle": 2.0, "idle_timeout": 30.0, "max_trace_duration": 600.0}
    return Assembler(Assembly(**{**defaults, **settings}), metrics)


def test_root_last_trace_completes_after_settle(metrics: Metrics) -> None:
    asm = make(metrics)
    asm.add_spans([span(TRACE_A, "0000000000000002", "0000000000000001")], now=0.0)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=1.0)
    assert asm.poll(2.9) == []
    [done] = asm.poll(3.0)
    assert done.reason == "complete"
    assert done.last_seen == 1.0
    assert {s.span_id for s in done.spans} == {"0000000000000001", "0000000000000002"}
    assert asm.traces_in_flight == 0 and asm.spans_in_flight == 0
    assert value(metrics, "otelgrade_traces_completed_total", {"reason": "complete"}) == 1
    assert value(metrics, "otelgrade_traces_in_flight") == 0


def test_root_first_waits_for_children_that_keep_arriving(metrics: Metrics) -> None:
    asm = make(metrics)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.0)
    for i in range(2, 10):  # a child every 1.5 s: each postpones completion
        asm.add_spans([span(TRACE_A, f"{i:016x}", "0000000000000001")], now=1.5 * (i - 1))
        assert asm.poll(1.5 * (i - 1) + 1.9) == []
    [done] = asm.poll(1.5 * 8 + 2.0)
    assert len(done.spans) == 9 and done.reason == "complete"


def test_trace_split_over_many_requests_in_random_order_is_one_trace(metrics: Metrics) -> None:
    asm = make(metrics)
    ids = [f"{i:016x}" for i in range(1, 201)]
    spans = [span(TRACE_A, ids[0])] + [span(TRACE_A, sid, ids[(i // 3)]) for i, sid in enumerate(ids[1:])]
    random.Random(7).shuffle(spans)
    now = 0.0
    for start in range(0, len(spans), 17):  # BatchSpanProcessor-sized pieces, 0.1 s apart
        asm.add_spans(spans[start : start + 17], now)
        assert asm.poll(now) == []
        now += 0.1
    [done] = asm.poll(now + 2.0)
    assert sorted(s.span_id for s in done.spans) == ids


def test_trace_without_root_closes_when_idle(metrics: Metrics) -> None:
    asm = make(metrics, idle_timeout=30.0)
    asm.add_spans([span(TRACE_A, "0000000000000002", "00000000000000ff")], now=0.0)
    asm.add_spans([span(TRACE_A, "0000000000000003", "00000000000000ff")], now=10.0)
    assert asm.poll(39.9) == []
    [done] = asm.poll(40.0)
    assert done.reason == "idle"


def test_busy_trace_closes_at_max_duration(metrics: Metrics) -> None:
    asm = make(metrics, idle_timeout=30.0, max_trace_duration=60.0)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.0)
    t = 0.0
    closed = []
    while not closed:
        t += 1.0
        asm.add_spans([span(TRACE_A, f"{int(t) + 1:016x}", "0000000000000001")], now=t)
        closed = asm.poll(t)
        assert t <= 60.0
    assert t == 60.0 and closed[0].reason == "max_duration"


def test_many_traces_close_in_deadline_order(metrics: Metrics) -> None:
    asm = make(metrics)
    trace_ids = [f"{i:032x}" for i in range(1, 101)]
    for i, trace_id in enumerate(trace_ids):
        asm.add_spans([span(trace_id, "0000000000000001")], now=i * 0.01)
    closed = []
    now = 0.0
    while asm.traces_in_flight:
        now += 0.05
        closed.extend(asm.poll(now))
    assert [c.trace_id for c in closed] == trace_ids


def test_full_assembler_evicts_the_oldest_trace(metrics: Metrics) -> None:
    asm = make(metrics, max_traces=2)
    asm.add_spans([span(TRACE_A, "0000000000000001", "00000000000000ff")], now=0.0)
    asm.add_spans([span(TRACE_B, "0000000000000001", "00000000000000ff")], now=1.0)
    third = "00000000000000000000000000000003"
    asm.add_spans([span(third, "0000000000000001", "00000000000000ff")], now=2.0)
    assert asm.traces_in_flight == 2
    [evicted] = asm.poll(2.0)
    assert evicted.trace_id == TRACE_A and evicted.reason == "evicted"
    assert value(metrics, "otelgrade_traces_completed_total", {"reason": "evicted"}) == 1
    # the evicted trace is decided: its stragglers are late, not a new trace
    asm.add_spans([span(TRACE_A, "0000000000000009", "0000000000000001")], now=3.0)
    assert value(metrics, "otelgrade_late_spans_total") == 1
    assert asm.traces_in_flight == 2


def test_spans_beyond_the_per_trace_limit_are_dropped_and_counted(metrics: Metrics) -> None:
    asm = make(metrics, max_spans_per_trace=5)
    result = asm.add_spans([span(TRACE_A, f"{i:016x}", "00000000000000ff") for i in range(1, 9)], now=0.0)
    assert result.accepted == 5 and result.rejected == {"trace_too_large": 3}
    assert value(metrics, "otelgrade_spans_rejected_total", {"reason": "trace_too_large"}) == 3
    assert asm.spans_in_flight == 5


def test_late_spans_are_counted_not_regraded(metrics: Metrics) -> None:
    asm = make(metrics)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.0)
    assert len(asm.poll(2.0)) == 1
    result = asm.add_spans([span(TRACE_A, "0000000000000002", "0000000000000001")] * 1, now=2.5)
    assert result.late == 1 and result.accepted == 0
    assert asm.traces_in_flight == 0
    assert asm.poll(100.0) == []
    assert value(metrics, "otelgrade_late_spans_total") == 1


def test_decision_cache_is_bounded(metrics: Metrics) -> None:
    asm = make(metrics, decision_cache_size=3)
    for i in range(1, 6):
        asm.add_spans([span(f"{i:032x}", "0000000000000001")], now=0.0)
    assert len(asm.poll(5.0)) == 5
    # the two oldest decisions were forgotten: their spans start new traces again
    asm.add_spans([span(f"{1:032x}", "0000000000000002")], now=6.0)
    asm.add_spans([span(f"{5:032x}", "0000000000000002")], now=6.0)
    assert asm.traces_in_flight == 1
    assert value(metrics, "otelgrade_late_spans_total") == 1


def test_duplicate_span_ids_are_dropped(metrics: Metrics) -> None:
    asm = make(metrics)
    result = asm.add_spans([span(TRACE_A, "0000000000000001"), span(TRACE_A, "0000000000000001")], now=0.0)
    assert result.accepted == 1 and result.rejected == {"duplicate_span_id": 1}
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.5)
    [done] = asm.poll(10.0)
    assert len(done.spans) == 1
    assert value(metrics, "otelgrade_spans_rejected_total", {"reason": "duplicate_span_id"}) == 2


@pytest.mark.parametrize("logs_first", [True, False])
def test_logs_join_their_trace_before_or_after_its_spans(metrics: Metrics, logs_first: bool) -> None:
    asm = make(metrics)
    spans = [span(TRACE_A, "0000000000000002", "0000000000000001"), span(TRACE_A, "0000000000000001")]
    logs = [log_event(TRACE_A, "0000000000000002"), log_event(TRACE_A, "0000000000000002", "gen_ai.choice")]
    if logs_first:
        asm.add_logs(logs, now=0.0)
        asm.add_spans(spans, now=0.5)
    else:
        asm.add_spans(spans, now=0.0)
        asm.add_logs(logs, now=0.5)
    assert asm.poll(2.4) == []  # the later arrival restarted the settle window
    [done] = asm.poll(2.5)
    assert done.reason == "complete"
    assert len(done.spans) == 2 and [e.event.name for e in done.logs] == ["gen_ai.user.message", "gen_ai.choice"]


def test_logs_for_a_span_that_never_arrives_do_not_stay(metrics: Metrics) -> None:
    asm = make(metrics, idle_timeout=5.0)
    asm.add_logs([log_event(TRACE_A, "0000000000000002")], now=0.0)
    [done] = asm.poll(5.0)
    assert done.reason == "idle" and done.spans == [] and len(done.logs) == 1
    asm.add_logs([log_event(TRACE_A, "0000000000000002")], now=6.0)
    assert value(metrics, "otelgrade_log_records_dropped_total", {"reason": "late"}) == 1


def test_drain_closes_everything_with_reason_shutdown(metrics: Metrics) -> None:
    asm = make(metrics)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.0)
    asm.add_spans([span(TRACE_B, "0000000000000002", "0000000000000001")], now=0.0)
    drained = asm.drain()
    assert sorted(d.trace_id for d in drained) == sorted([TRACE_A, TRACE_B])
    assert {d.reason for d in drained} == {"shutdown"}
    assert asm.traces_in_flight == 0 and asm.poll(1000.0) == []
    assert value(metrics, "otelgrade_traces_completed_total", {"reason": "shutdown"}) == 2


def test_reconfigure_applies_new_settle_to_held_traces(metrics: Metrics) -> None:
    asm = make(metrics, settle=10.0)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.0)
    asm.reconfigure(Assembly(settle=1.0))
    [done] = asm.poll(1.0)
    assert done.reason == "complete"


def test_heap_stays_bounded_under_a_stream_of_spans(metrics: Metrics) -> None:
    asm = make(metrics)
    asm.add_spans([span(TRACE_A, "0000000000000001")], now=0.0)
    for i in range(2, 5000):
        asm.add_spans([span(TRACE_A, f"{i:016x}", "0000000000000001")], now=i * 0.001)
        asm.poll(i * 0.001)
    assert len(asm._heap) <= 2


def test_eviction_inside_one_batch_keeps_the_counts_straight(metrics: Metrics) -> None:
    asm = make(metrics, max_traces=1)
    batch = [
        span(TRACE_A, "0000000000000001"),
        span(TRACE_B, "0000000000000001"),
        span(TRACE_A, "0000000000000002", "0000000000000001"),
    ]
    result = asm.add_spans(batch, now=0.0)
    assert result.accepted == 2 and result.late == 1
    [evicted] = asm.poll(0.0)
    assert evicted.trace_id == TRACE_A and len(evicted.spans) == 1
    assert asm.traces_in_flight == 1 and asm.spans_in_flight == 1
    [done] = asm.poll(2.0)
    assert done.trace_id == TRACE_B and asm.spans_in_flight == 0


def test_next_deadline_says_when_the_next_trace_can_complete(metrics: Metrics) -> None:
    assembler = make(metrics, settle=0.2, idle_timeout=5.0)
    assert assembler.next_deadline() is None
    assembler.add_spans([span(TRACE_A, "a1", "a0")], now=1.0)  # no root yet: idle timeout
    assert assembler.next_deadline() == pytest.approx(6.0)
    assembler.add_spans([span(TRACE_A, "a0")], now=1.5)  # the root: settle from now
    assert assembler.next_deadline() == pytest.approx(1.7)
    assert [t.trace_id for t in assembler.poll(1.7)] == [TRACE_A]
    stale = assembler.next_deadline()  # the heap forgets closed traces lazily: an early wake-up, nothing more
    assert stale is None or assembler.poll(stale) == []
    assert assembler.next_deadline() is None


def test_received_spans_hold_their_bytes_until_read() -> None:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    message = scope.spans.add(trace_id=bytes.fromhex(TRACE_A), span_id=bytes(7) + b"\x01", name="chat gpt-4o")
    message.attributes.add(key="gen_ai.request.model").value.string_value = "gpt-4o"
    (received,) = spans_from_request(request).spans
    message.name = "changed after decoding"  # the held span does not depend on the request staying alive
    assert (received.trace_id, received.span_id, received.parent_id) == (TRACE_A, "0000000000000001", None)
    expected = Span(TRACE_A, "0000000000000001", None, "chat gpt-4o", 0, 0, 0, 0, "", {}, [], {})
    expected.attributes = {"gen_ai.request.model": "gpt-4o"}
    assert received.read() == expected


def test_late_spans_reopen_a_kept_trace_as_its_next_revision(metrics: Metrics) -> None:
    assembler = Assembler(Assembly(settle=0.2, regrade_traces=1), metrics, keep_closed=True)
    assembler.add_spans([span(TRACE_A, "a1", "a0"), span(TRACE_A, "a0")], now=0.0)
    assembler.add_spans([span(TRACE_B, "b0")], now=0.0)
    first = {t.trace_id: t for t in assembler.poll(1.0)}
    assert {t: c.revision for t, c in first.items()} == {TRACE_A: 1, TRACE_B: 1}
    # Only the last closed trace is kept (regrade_traces=1): which one closed last is the order poll saw them.
    other, last = list(first)
    assert assembler.add_spans([span(other, "late")], now=2.0).late == 1
    assert assembler.add_spans([span(last, "late", None)], now=2.0).late == 0
    assert assembler.poll(2.1) == []  # it settles again from the late span
    (again,) = assembler.poll(2.2)
    assert again.trace_id == last and again.revision == 2 and again.reason == "complete"
    assert sorted(s.span_id for s in again.spans) == sorted([*(s.span_id for s in first[last].spans), "late"])
    assert value(metrics, "otelgrade_late_spans_total") == 1
    assert assembler.spans_in_flight == 0


def test_closed_traces_are_not_kept_unless_asked(metrics: Metrics) -> None:
    assembler = make(metrics, settle=0.2)
    assembler.add_spans([span(TRACE_A, "a0")], now=0.0)
    assert len(assembler.poll(1.0)) == 1
    assert assembler.add_spans([span(TRACE_A, "late")], now=2.0).late == 1
