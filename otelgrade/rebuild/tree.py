"""The span tree of one trace, safe against what real exports contain.

Duplicate span ids keep the first span; a parent that is missing makes a root; parent cycles
are cut at their earliest span. GenAI log events are attached to the span they name, as if
they were span events (the input spans are not modified).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator, Mapping, Sequence

from otelgrade.core.spans import Event, LogEvent, Span


class Tree:
    def __init__(self, spans: Sequence[Span], logs: Sequence[LogEvent] = ()) -> None:
        by_id: dict[str, Span] = {}
        for span in spans:
            by_id.setdefault(span.span_id, span)
        self.spans = by_id
        self.parent: dict[str, str | None] = {}
        self.children: dict[str, list[str]] = {}
        for span in by_id.values():
            parent = span.parent_id if span.parent_id in by_id and span.parent_id != span.span_id else None
            self.parent[span.span_id] = parent
            if parent is not None:
                self.children.setdefault(parent, []).append(span.span_id)
        for kids in self.children.values():
            kids.sort(key=self._start_key)
        if logs:
            self._attach(logs)
        self.roots = sorted((s for s, p in self.parent.items() if p is None), key=self._start_key)
        self.order: dict[str, int] = {}
        for root in self.roots:
            self._number(root)
        if len(self.order) < len(by_id):
            self._cut_cycles()

    def _attach(self, logs: Sequence[LogEvent]) -> None:
        """Each log record's event on the span it belongs to: the one it names, or the first of that span's
        children that was running when it was logged (an instrumentation that logs a model call's messages while
        the application's span is current, not the call's own)."""
        spans = self.spans
        attached: dict[str, list[Event]] = {}
        for log in logs:
            if log.span_id in spans:
                at, target = log.event.time_ns, log.span_id
                if at:
                    kids = self.children.get(target, ())
                    target = next((c for c in kids if spans[c].start_ns <= at <= spans[c].end_ns), target)
                attached.setdefault(target, []).append(log.event)
        for span_id, extra in attached.items():
            span = spans[span_id]
            spans[span_id] = dataclasses.replace(span, events=sorted([*span.events, *extra], key=lambda e: e.time_ns))

    def _cut_cycles(self) -> None:
        """Every span not reached from a root leads up to a parent cycle: cut each cycle at its earliest span,
        which becomes a root (one walk up per span, each span walked once)."""
        walked: dict[str, int] = {}  # span id -> the walk that reached it first
        cuts: list[str] = []
        for walk, start in enumerate(self.parent):
            if start in self.order or start in walked:
                continue
            path: list[str] = []
            span_id: str | None = start
            while span_id is not None and span_id not in self.order and span_id not in walked:
                walked[span_id] = walk
                path.append(span_id)
                span_id = self.parent[span_id]
            if span_id is not None and walked.get(span_id) == walk:  # this walk closed a cycle
                cycle = path[path.index(span_id) :]
                cuts.append(min(cycle, key=self._start_key))
        cuts.sort(key=self._start_key)
        for cut in cuts:
            parent = self.parent[cut]
            if parent is not None:
                self.children[parent].remove(cut)
            self.parent[cut] = None
            self.roots.append(cut)
            self._number(cut)

    def _start_key(self, span_id: str) -> tuple[int, str]:
        return self.spans[span_id].start_ns, span_id

    def _number(self, root: str) -> None:
        stack = [root]
        while stack:
            span_id = stack.pop()
            if span_id in self.order:
                continue
            self.order[span_id] = len(self.order)
            stack.extend(reversed(self.children.get(span_id, ())))

    def walk(self, start: str, stop: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """`start` and its descendants in tree order, not entering spans in `stop` (other than `start`)."""
        children = self.children
        if start not in children:  # a leaf, as most spans are
            return [start]
        # The tree is a forest once cycles are cut (one parent per span): no span is reached twice.
        out, stack = [], [start]
        while stack:
            span_id = stack.pop()
            out.append(span_id)
            kids = children.get(span_id)
            if kids:
                stack.extend(reversed(kids) if not stop else [c for c in reversed(kids) if c not in stop])
        return out

    def holding(self, marked: Collection[str], stop: Collection[str] = ()) -> set[str]:
        """The spans whose subtree (below themselves) holds a `marked` span, not looking inside `stop` spans.
        One pass over the tree, children before parents: linear for any shape."""
        found: set[str] = set()
        for span_id in reversed(self.order):
            for child in self.children.get(span_id, ()):
                if child in marked or (child in found and child not in stop):
                    found.add(span_id)
                    break
        return found

    def owners(self, group_of: Mapping[str, int]) -> dict[str, int]:
        """For each span with grouped spans in its subtree (itself included): their group when they all share
        one, else -1. One pass, children before parents."""
        found: dict[str, int] = {}
        for span_id in reversed(self.order):
            mine = group_of.get(span_id)
            for child in self.children.get(span_id, ()):
                under = found.get(child)
                if under is not None:
                    mine = under if mine is None or mine == under else -1
            if mine is not None:
                found[span_id] = mine
        return found

    def nearest(self, marked: Collection[str]) -> dict[str, str]:
        """Each span's nearest ancestor in `marked` (spans with none are left out). One pass, parents first."""
        found: dict[str, str] = {}
        for span_id in self.order:
            parent = self.parent[span_id]
            if parent is not None:
                above = parent if parent in marked else found.get(parent)
                if above is not None:
                    found[span_id] = above
        return found

    def ancestors(self, span_id: str) -> Iterator[str]:
        seen = {span_id}
        parent = self.parent.get(span_id)
        while parent is not None and parent not in seen:
            yield parent
            seen.add(parent)
            parent = self.parent.get(parent)
