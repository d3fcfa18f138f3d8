"""CPU per span of each in-process stage against the floor's, in one process without a server: what one process
costs before gRPC, the event loop and its threads.

Stages, on the loads of `bench.loads` (agent mix, captured traces):
  receive   decode the requests and assemble their spans into completed traces
  rebuild   rebuild every completed trace into trajectories
  grade     grade every trajectory with the benchmark's code graders, exporting to the grades page's store
and the floor of `bench.run` (`loadgen.decode_walk`: parse the same bytes and read every span and attribute into
Python). Each is timed with `process_time`, best of `--repeat` passes, after the server's start-up tuning of the
collector (`gc.freeze` and its thresholds). `bench.instructions` counts the same stages' instructions.

usage: python -m bench.stages [--loads agent,captured] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench.loadgen import decode_walk
from bench.loads import agent_mix, captured
from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import AssemblySettings
from otelgrade.export.exporter import Exporter
from otelgrade.export.ui import RunStore
from otelgrade.grade.graders.specs import grader_specs
from otelgrade.grade.grading import Grading, Suite
from otelgrade.intake.assemble import Assembler
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from otelgrade.service.server import GC_THRESHOLDS

CHAIN = ("receive", "rebuild", "grade")


def prepare(load_name: str, agent_runs: int = 200) -> tuple[int, dict[str, Callable[[], Any]]]:
    """(spans in the load, stage name -> a pass of that stage over the whole load); each stage's input is made
    once, by running the stages before it."""
    from bench.run import DETERMINISTIC  # the benchmark's graders (bench.run reports these figures too)

    load = agent_mix(agent_runs, 10, 50) if load_name == "agent" else captured(1)
    bodies = load.issue()
    metrics = Metrics()
    store = RunStore(1000)
    suite = Suite.build("bench", {}, [s for g in DETERMINISTIC for s in grader_specs(g)])
    grading = Grading([suite], Exporter(metrics, [store]), metrics, on_run=store.add_run)

    def receive() -> list[Any]:
        assembler = Assembler(AssemblySettings(max_traces=10**6), metrics)
        for body in bodies:
            assembler.add_spans(decode_traces(body).spans, 0.0)
        return assembler.drain()

    completed = receive()

    def rebuild_all() -> list[Any]:
        return [t for c in completed for t in rebuild(c.spans, c.logs)]

    trajectories = rebuild_all()

    def grade_all() -> None:
        for t in trajectories:
            grading.grade(t)

    grade_all()
    stages = {"receive": receive, "rebuild": rebuild_all, "grade": grade_all, "floor": lambda: decode_walk(bodies)}
    return sum(load.span_counts), stages


def timed(load_name: str, repeat: int = 5) -> dict[str, float]:
    """CPU µs per span of each stage and the floor (best of `repeat` passes), with the server's collector tuning."""
    spans, stages = prepare(load_name)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    figures = {}
    for name, stage in stages.items():
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            stage()
            best = min(best, time.process_time() - start)
        figures[name] = best / spans * 1e6
    return figures


def row(load_name: str, figures: dict[str, float]) -> str:
    chain = sum(figures[s] for s in CHAIN)
    cells = [f"{figures[s]:.1f}" for s in (*CHAIN, "floor")]
    return f"| {load_name} | {' | '.join(cells)} | {chain:.1f} | {chain / figures['floor']:.2f} |"


HEAD = [
    "| load | receive µs/span | rebuild | grade | floor | in-process chain | × floor |",
    "|---|---|---|---|---|---|---|",
]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--loads", default="agent,captured")
    p.add_argument("--repeat", type=int, default=5, help="passes of each stage; the least CPU is kept")
    args = p.parse_args(argv)
    print("\n".join(HEAD))
    for load in args.loads.split(","):
        print(row(load, timed(load, args.repeat)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
