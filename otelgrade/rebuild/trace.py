"""Rebuild one trace: classify its spans, find each agent's runs, build them, and group them into requests."""

from __future__ import annotations

from collections.abc import Sequence

from otelgrade.core.spans import LogEvent, Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.rebuild.consistency import check_trace
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.identity import SCOPE_ATTRIBUTE, conversation_of, marks, scope_of
from otelgrade.rebuild.requests import requests
from otelgrade.rebuild.runs import Notes, build, find_runs
from otelgrade.rebuild.tree import Tree


def rebuild_trace(
    spans: Sequence[Span],
    logs: Sequence[LogEvent] = (),
    notes: Notes | None = None,
    dialects: Sequence[Dialect] = (),
    id_attributes: Sequence[str] = (),
    scope_attribute: str | None = SCOPE_ATTRIBUTE,
) -> list[Trajectory]:
    """Every run of one trace, ordered by start time. `dialects` (from the config's mappings) are asked before
    the built-in ones; `id_attributes` (`conversations.id_attributes`) before the built-in conversation ids, whose
    scope `scope_attribute` names (`conversations.scope_attribute`); `notes` collects why spans were set aside."""
    if not spans:
        return []
    notes = {} if notes is None else notes
    tree = Tree(spans, logs)
    classified = {sid: c for sid, span in tree.spans.items() if (c := classify(span, dialects)) is not None}
    runs = find_runs(tree, classified, notes)
    stop = frozenset(top for run in runs for top in run.tops)
    regions = {run.root.span_id: [s for top in run.tops for s in tree.walk(top, stop)] for run in runs}
    run_of = {s: run.root.span_id for run in runs for s in regions[run.root.span_id]}
    for run in runs:
        if run.tool_root:  # the tool span itself belongs to the run that called it
            regions[run.root.span_id].remove(run.root.span_id)
            caller = run_of.get(tree.parent.get(run.root.span_id) or "")
            if caller is not None and caller != run.root.span_id:
                regions[caller].append(run.root.span_id)
    built = {run.root.span_id: build(tree, classified, run, regions[run.root.span_id], notes) for run in runs}
    found = requests(tree, classified, runs, built, regions, notes)
    check_trace(found)
    _name_conversations(tree, found, id_attributes, scope_attribute)
    return sorted(found, key=lambda t: (t.start_time or "", tree.order.get(t.span_id, -1)))


def _name_conversations(
    tree: Tree, runs: list[Trajectory], id_attributes: Sequence[str], scope_attribute: str | None
) -> None:
    """Each request run's conversation (scope and id) and end marker; a nested run shares its request's."""
    named, marked = marks(tree, id_attributes)
    if not named:  # most traces: nothing to look for
        return
    by_span = {run.span_id: run for run in runs}
    for run in runs:
        if run.parent_span_id is None:
            run.conversation_id, run.ends_conversation = conversation_of(tree, run.span_id, id_attributes, marked)
            if run.conversation_id is not None:
                run.conversation_scope = scope_of(tree, run.span_id, scope_attribute)
    for run in runs:
        request, seen = run, set()
        while request.parent_span_id is not None and request.parent_span_id in by_span and request.span_id not in seen:
            seen.add(request.span_id)
            request = by_span[request.parent_span_id]
        if request is not run:
            run.conversation_id, run.conversation_scope = request.conversation_id, request.conversation_scope
