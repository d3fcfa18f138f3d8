"""Rebuild agent-run trajectories from spans, whatever instrumentation wrote them.

Each convention ("dialect") is one module of `dialects/`, found automatically: it detects its
spans, reads facts off them (`facts`) and converts its own message format. `runs` picks the runs
and assembles `Trajectory` records, with `tool_calls` matching requested calls to executions.
"""

from __future__ import annotations

from collections.abc import Sequence

from otelgrade.core.spans import AnySpan, LogEvent, Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import DIALECTS, classify
from otelgrade.rebuild.identity import SCOPE_ATTRIBUTE
from otelgrade.rebuild.trace import rebuild_trace

__all__ = ["DIALECTS", "classify", "rebuild", "rebuild_grouped"]


def rebuild_grouped(
    received: Sequence[AnySpan],
    logs: Sequence[LogEvent] = (),
    dialects: Sequence[Dialect] = (),
    id_attributes: Sequence[str] = (),
    scope_attribute: str | None = SCOPE_ATTRIBUTE,
) -> list[Trajectory]:
    """The agent runs of one trace whose spans (and log events) the caller already grouped by trace id, as the
    assembler and the offline reader do: read and rebuilt as `rebuild` does, without checking the grouping again."""
    spans = [span.read() for span in received]
    return rebuild_trace(spans, logs, None, dialects, id_attributes, scope_attribute) if spans else []


def rebuild(
    received: Sequence[AnySpan],
    logs: Sequence[LogEvent] = (),
    dialects: Sequence[Dialect] = (),
    id_attributes: Sequence[str] = (),
    scope_attribute: str | None = SCOPE_ATTRIBUTE,
) -> list[Trajectory]:
    """All the agent runs in ONE trace (all spans share a trace id). Pure function.

    `logs` are GenAI events that arrived as OTLP log records; each is read as an event of the
    span it names. `dialects` are the config's mappings (`rebuild.mapping.mapped_dialects`), asked
    first; `id_attributes` (`conversations.id_attributes`) name a run's conversation before the conventions' ids,
    `scope_attribute` (`conversations.scope_attribute`) whose id it is.
    Spans of other trace ids, if any, are rebuilt as their own traces.
    """
    spans = [span.read() for span in received]
    if not spans:
        return []
    trace_id = spans[0].trace_id
    if all(s.trace_id == trace_id for s in spans) and all(log.trace_id == trace_id for log in logs):
        return rebuild_trace(spans, logs, None, dialects, id_attributes, scope_attribute)
    by_trace: dict[str, tuple[list[Span], list[LogEvent]]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, ([], []))[0].append(span)
    for log in logs:
        if log.trace_id in by_trace:
            by_trace[log.trace_id][1].append(log)
    return [
        t
        for trace_spans, trace_logs in by_trace.values()
        for t in rebuild_trace(trace_spans, trace_logs, None, dialects, id_attributes, scope_attribute)
    ]
