"""Parent cycles in a trace: each cycle is cut at its earliest span, what hangs off a cycle stays where it hangs,
and a trace made of thousands of cycles builds in linear time (the timing is in bench/tree_cycles.py)."""

from __future__ import annotations

from bench.tree_cycles import CYCLE, cyclic_trace
from otelgrade.rebuild.tree import Tree


def test_ten_thousand_spans_in_cycles_become_one_tree_per_cycle() -> None:
    spans = cyclic_trace(10_000)
    tree = Tree(spans)
    groups = len(spans) // (CYCLE + 1)
    assert len(tree.roots) == groups
    assert sorted(tree.order.values()) == list(range(len(spans)))  # every span numbered once
    for group in range(groups):
        a, b, c, d, e = (spans[group * (CYCLE + 1) + i].span_id for i in range(CYCLE + 1))
        assert tree.parent[d] is None  # the cycle's earliest span is its root
        assert (tree.parent[c], tree.parent[b], tree.parent[a]) == (d, c, b)
        assert tree.parent[e] == b  # started before the whole cycle, yet not cut loose
        assert tree.walk(d) == [d, c, b, e, a]  # children by start time
        assert d not in tree.children.get(a, [])
