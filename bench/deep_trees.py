"""Grading hostile trace shapes: one run of thousands of spans, either flat (every span a child of the run's agent)
or chained (each span the child of the one before), of tool spans, agent spans or model-call spans. Prints a table
of the seconds the live path takes for each (`Pipeline.grade_trace` with the embedded default config: rebuild,
what the rebuild could not read, grading; best of `--repeat`): linear in the run's size, where asking something of
every span or call about all the others would be quadratic.

usage: python -m bench.deep_trees [--sizes 2500,5000,10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from typing import Literal

from otelgrade.config import load_config
from otelgrade.core.spans import Span
from otelgrade.pipeline import Pipeline

Shape = Literal["tool", "agent", "llm"]
Layout = Literal["flat", "chained"]
SHAPES: tuple[Shape, ...] = ("tool", "agent", "llm")
LAYOUTS: tuple[Layout, ...] = ("flat", "chained")
SIZES = (2_500, 5_000, 10_000)
TRACE = "ab" * 16
_BASE_NS = 1_700_000_000_000_000_000


def deep_trace(depth: int, shape: Shape) -> list[Span]:
    """An agent span, then `depth` spans of `shape` each under the one before."""
    return shaped_trace(depth, shape, "chained")


def shaped_trace(size: int, shape: Shape, layout: Layout) -> list[Span]:
    """An agent span, then `size` spans of `shape`: each under the agent (`flat`) or under the one before
    (`chained`), one millisecond apart, the ones that come first ending last (as in a chain)."""
    spans = [_span(1, None, "invoke_agent", {"gen_ai.agent.name": "deep"})]
    for n in range(2, size + 2):
        parent = 1 if layout == "flat" else n - 1
        if shape == "tool":
            attributes: dict[str, object] = {
                "gen_ai.tool.name": f"step_{n}",
                "gen_ai.tool.call.id": f"call_{n}",
                "gen_ai.tool.call.arguments": f'{{"n": {n}}}',
                "gen_ai.tool.call.result": "ok",
            }
            spans.append(_span(n, parent, "execute_tool", attributes))
        elif shape == "agent":
            spans.append(_span(n, parent, "invoke_agent", {"gen_ai.agent.name": f"agent_{n}"}))
        else:
            spans.append(_span(n, parent, "chat", {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 1}))
    return spans


def _span(n: int, parent: int | None, operation: str, attributes: dict[str, object]) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=f"{n:016x}",
        parent_id=f"{parent:016x}" if parent else None,
        name=operation,
        kind=1,
        start_ns=_BASE_NS + n * 1_000_000,
        end_ns=_BASE_NS + 1_000_000_000_000 - n,
        status_code=0,
        status_message="",
        attributes={"gen_ai.operation.name": operation, **attributes},
        events=[],
        resource={"service.name": "deep"},
    )


def graded_in(spans: list[Span]) -> float:
    """Seconds the live path takes to rebuild and grade one trace, with the embedded default config."""
    pipeline = Pipeline(load_config(None), sinks=[])
    began = time.perf_counter()
    pipeline.grade_trace(spans)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="spans per run, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print("| spans | " + " | ".join(f"{size:,}" for size in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for layout in LAYOUTS:
        for shape in SHAPES:
            cells = []
            for size in sizes:
                spans = shaped_trace(size, shape, layout)
                cells.append(f"{min(graded_in(spans) for _ in range(args.repeat)):.2f} s")
            print(f"| {shape} {layout} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
