"""Instructions per span of each in-process stage, counted by valgrind's callgrind: the figure for comparing two
versions of the code on a machine whose timings drift (a shared VM's CPU time for the same work varies by
tens of percent between runs; its instruction count does not).

Stages, on the loads of `bench.loads` (agent mix, captured traces):
  receive   decode the requests and assemble their spans into completed traces
  rebuild   rebuild every completed trace into trajectories
  grade     grade every trajectory with the benchmark's code graders, exporting to the grades page's store
and, for scale, the floor of `bench.run` (`loadgen.decode_walk`: parse the same bytes and read every span and
attribute into Python); `total / floor` is the in-process cost over the floor (at most 2 for end to end at
half the floor, before the server's event loop and gRPC).
Each stage is counted as (instructions of a process that runs it `--reps` extra times) - (instructions of one
that does not), over the spans it covered; both processes start with the same warm-up, under a fixed hash seed,
and count with the garbage collector off (its share depends on what else the process holds; with the server's
tuned thresholds it was within 1% of none on these loads).
`--against REF` counts a git revision of this repository too (checked out in a temporary worktree), in the same
run, and prints the change.

usage: python -m bench.instructions [--against REF] [--loads agent,captured] [--reps 2]
needs: valgrind
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAGES = ("receive", "rebuild", "grade")  # the chain; "floor" is counted beside it

# Run in the child process, from the checkout under test (argv: checkout, load, stage or "none", reps).
CHILD = r"""
import gc, sys
sys.path.insert(0, sys.argv[1])
from bench.stages import prepare

spans, stages = prepare(sys.argv[2])
# The collector's work depends on the process's history (what is alive when it runs), which would move
# instructions between stages from one process to the next: it is switched off while counting.
gc.collect()
gc.freeze()
gc.disable()
stage = stages.get(sys.argv[3])
for _ in range(int(sys.argv[4]) if stage else 0):
    stage()
print(spans)
"""


def count(checkout: Path, load: str, stage: str, reps: int) -> tuple[int, int]:
    """(spans in the load, instructions the whole process executed)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", CHILD]
    done = subprocess.run([*cmd, str(checkout), load, stage, str(reps)], capture_output=True, text=True, env=env)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"the counted process failed:\n{done.stderr[-2000:]}")
    return int(done.stdout.split()[-1]), int(found.group(1))


def per_span(checkout: Path, load: str, reps: int) -> dict[str, float]:
    spans, base = count(checkout, load, "none", 0)
    return {stage: (count(checkout, load, stage, reps)[1] - base) / (reps * spans) for stage in (*STAGES, "floor")}


def _figure(counts: dict[str, float], row: str) -> float:
    total = sum(counts[stage] for stage in STAGES)
    if row == "total":
        return total
    return total / counts["floor"] if row == "total / floor" else counts[row]


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """`ref` checked out in a temporary worktree, with this checkout's `bench/` (so both run the same loads)."""
    path = Path(tempfile.mkdtemp(prefix="otelgrade-instructions-")) / "tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(path), ref], check=True)
    try:
        shutil.copytree(REPO / "bench", path / "bench", dirs_exist_ok=True)
        yield path
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False)
        shutil.rmtree(path.parent, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--against", metavar="REF", help="also count this git revision, and print the change")
    p.add_argument("--loads", default="agent,captured")
    p.add_argument("--reps", type=int, default=2, help="extra passes of a stage in the counted process")
    args = p.parse_args(argv)
    if shutil.which("valgrind") is None:
        p.error("valgrind is not installed (Debian: apt install valgrind)")
    loads = args.loads.split(",")
    with contextlib.ExitStack() as stack:
        other = stack.enter_context(worktree(args.against)) if args.against else None
        print(f"| load | stage | {args.against + ' | ' if other else ''}this tree |{' change |' if other else ''}")
        print("|---|---|---|" + ("---|---|" if other else ""))
        for load in loads:
            now = per_span(REPO, load, args.reps)
            before = per_span(other, load, args.reps) if other else None
            for stage in (*STAGES, "total", "floor", "total / floor"):
                row = f"| {load} | {stage} | "
                values = [_figure(v, stage) for v in (before, now) if v is not None]
                spec = ",.2f" if stage == "total / floor" else ",.0f"
                row += " | ".join(f"{v:{spec}}" for v in values) + " |"
                if len(values) == 2:
                    row += f" {values[1] / values[0] - 1:+.1%} |"
                print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
