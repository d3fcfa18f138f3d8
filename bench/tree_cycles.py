"""Tree building on a hostile trace: `--spans` spans (default 10,000) in parent cycles of four, each cycle with
a span hanging off it, none reachable from a root. Prints the seconds `Tree` takes (best of `--repeat`).

usage: python -m bench.tree_cycles [--spans 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from otelgrade.core.spans import Span
from otelgrade.rebuild.tree import Tree

CYCLE = 4  # spans on each cycle; one more hangs off it


def cyclic_trace(spans: int) -> list[Span]:
    """Groups of five: a -> b -> c -> d -> a (a starts last, d first) and e under b (e starts before all)."""
    out = []
    for group in range(spans // (CYCLE + 1)):
        ids = [f"{group * (CYCLE + 1) + i + 1:016x}" for i in range(CYCLE + 1)]
        base = group * 100
        for i in range(CYCLE):
            out.append(_span(ids[i], ids[(i + 1) % CYCLE], base + (CYCLE - i) * 10))
        out.append(_span(ids[CYCLE], ids[1], base))
    return out


def _span(span_id: str, parent: str, start: int) -> Span:
    return Span("ab" * 16, span_id, parent, "step", 1, start, start + 5, 0, "", {}, [], {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spans = cyclic_trace(args.spans)
    best = float("inf")
    for _ in range(args.repeat):
        began = time.perf_counter()
        Tree(spans)
        best = min(best, time.perf_counter() - began)
    print(f"Tree of {len(spans)} spans in {len(spans) // (CYCLE + 1)} parent cycles: {best:.3f}s")


if __name__ == "__main__":
    main()
