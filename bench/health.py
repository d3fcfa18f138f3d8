"""What the run-health graders cost: each one over every real captured run (`tests/fixtures/traces`,
`tests/fixtures/frameworks`), in microseconds per run and per span of the captured traces.

Rebuilding the runs is not timed, only the graders; each figure is the best of `--repeat` passes. The last
row is what the grading loop adds per grade whatever the grader (`grade_safely` around a grader that does
nothing), for scale.

usage: python -m bench.health [--repeat 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import GradeResult, build_grader, grade_safely
from otelgrade.intake.decode import decode_traces
from otelgrade.tools.offline import read_inputs

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
GRADERS: dict[str, dict[str, Any]] = {
    "no_loops": {},
    "no_loops (window 10)": {"window": 10},
    "tool_error_rate": {"max": 0.2},
    "error_recovery": {},
    "token_budget": {"max_total": 10_000},
    "cost_budget": {"max": 0.05},
    "duration": {"max": "30s"},
    "context_growth": {"max_ratio": 5},
}


def captured_runs() -> tuple[list[Trajectory], int]:
    """Every captured run, and the number of spans in their traces."""
    folders = sorted({p.parent for root in ("traces", "frameworks") for p in (FIXTURES / root).glob("*/*/*.pb")})
    runs: list[Trajectory] = []
    spans = 0
    for folder in folders:
        runs.extend(read_inputs([folder]))
        bodies = (p.read_bytes() for p in folder.glob("*.pb") if not p.name.endswith(".logs.pb"))
        spans += sum(len(decode_traces(body).spans) for body in bodies)
    return runs, spans


def best_pass_ns(grade: Callable[[Trajectory], Any], runs: Sequence[Trajectory], repeat: int) -> int:
    """The fastest of `repeat` passes of `grade` over every run."""
    best = None
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for run in runs:
            grade(run)
        took = time.perf_counter_ns() - start
        best = took if best is None else min(best, took)
    return best or 0


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    runs, spans = captured_runs()
    rows = {}
    for label, params in GRADERS.items():
        grader = build_grader(label.split(" ")[0], params)
        rows[label] = best_pass_ns(grader, runs, args.repeat)
    rows["all of the above"] = sum(rows.values())
    nothing = GradeResult.check(True)
    rows["grading loop, per grade"] = best_pass_ns(lambda run: grade_safely(lambda _: nothing, run), runs, args.repeat)
    figures = {
        label: {"us_per_run": ns / 1e3 / len(runs), "us_per_span": ns / 1e3 / spans} for label, ns in rows.items()
    }
    if args.json:
        print(json.dumps({"runs": len(runs), "spans": spans, "graders": figures}, indent=2))
        return
    print(f"{len(runs)} captured runs, {spans} spans; best of {args.repeat} passes")
    print(f"{'grader':<26}{'µs/run':>10}{'µs/span':>10}")
    for label, f in figures.items():
        print(f"{label:<26}{f['us_per_run']:>10.2f}{f['us_per_span']:>10.3f}")


if __name__ == "__main__":
    main()
