"""Rebuilding a hostile trace shape: one run whose spans form a chain `--depth` deep (default 10,000), of tool
spans, agent spans or model-call spans, each the child of the one before. Prints the seconds `rebuild` takes for
each shape (best of `--repeat`): linear in the depth, where walking each span's subtree would be quadratic.

usage: python -m bench.deep_trees [--depth 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from typing import Literal

from otelgrade.core.spans import Span
from otelgrade.rebuild import rebuild

Shape = Literal["tool", "agent", "llm"]
SHAPES: tuple[Shape, ...] = ("tool", "agent", "llm")
TRACE = "ab" * 16


def deep_trace(depth: int, shape: Shape) -> list[Span]:
    """An agent span, then `depth` spans of `shape` each under the one before."""
    spans = [_span(1, None, "invoke_agent", {"gen_ai.agent.name": "deep"})]
    for n in range(2, depth + 2):
        if shape == "tool":
            attributes = {"gen_ai.tool.name": f"step_{n}", "gen_ai.tool.call.result": "ok"}
            spans.append(_span(n, n - 1, "execute_tool", attributes))
        elif shape == "agent":
            spans.append(_span(n, n - 1, "invoke_agent", {"gen_ai.agent.name": f"agent_{n}"}))
        else:
            spans.append(_span(n, n - 1, "chat", {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 1}))
    return spans


def _span(n: int, parent: int | None, operation: str, attributes: dict[str, object]) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=f"{n:016x}",
        parent_id=f"{parent:016x}" if parent else None,
        name=operation,
        kind=1,
        start_ns=1_700_000_000_000_000_000 + n,
        end_ns=1_700_000_001_000_000_000 - n,
        status_code=0,
        status_message="",
        attributes={"gen_ai.operation.name": operation, **attributes},
        events=[],
        resource={"service.name": "deep"},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for shape in SHAPES:
        spans = deep_trace(args.depth, shape)
        best = min(_timed(spans) for _ in range(args.repeat))
        print(f"{shape:>5} chain of {args.depth:,} spans: rebuilt in {best:.2f} s")


def _timed(spans: list[Span]) -> float:
    began = time.perf_counter()
    rebuild(spans)
    return time.perf_counter() - began


if __name__ == "__main__":
    main()
