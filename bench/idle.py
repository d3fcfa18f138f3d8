"""What `otelgrade serve` costs while nothing arrives: CPU time a second of the whole service (the receiving
process and its grading workers, from /proc), for one process and for grading workers, after one run was graded.

With `--repos`, the same for each checkout given (e.g. main's beside this one), alternately round by round, so
versions compare on a shared machine.

usage: python -m bench.idle [--workers 1,2] [--seconds 10] [--rounds 3] [--repos PATH,PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench import loadgen
from bench.run import REPO, SETTLE, _ports, serve, server_config

RUNS = 10  # graded before the quiet window, so every part of the service has started


def idle_cpu(repo: Path, workers: int, seconds: float, workdir: Path) -> float:
    """Milliseconds of CPU a second the service used over `seconds` of quiet, after grading one batch of runs."""
    config = server_config(_ports(), SETTLE)
    with serve(workdir, f"idle-{workers}", config, timeout=180, workers=workers, repo=repo) as server:
        (body,) = loadgen.encode_requests(RUNS, per_request=RUNS)
        loadgen.grpc_sender(server.grpc)(body)
        deadline = time.monotonic() + 60
        while loadgen.total(loadgen.scrape(server.metrics_url), "otelgrade_runs_graded_total") < RUNS:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not grade {RUNS} runs within 60s:\n{server.log.read_text()}")
            time.sleep(0.1)
        before, began = loadgen.cpu_seconds(server.pid) or 0.0, time.monotonic()
        time.sleep(seconds)  # the window measured
        used = (loadgen.cpu_seconds(server.pid) or 0.0) - before
        return 1000 * used / (time.monotonic() - began)


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--workers", default="1,2")
    p.add_argument("--seconds", type=float, default=10.0, help="the quiet window measured per server")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repos", default=str(REPO), help="checkouts to measure, comma-separated")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    repos = [Path(r).resolve() for r in args.repos.split(",")]
    counts = [int(w) for w in args.workers.split(",")]
    got: dict[tuple[str, int], list[float]] = {(str(r), w): [] for r in repos for w in counts}
    with tempfile.TemporaryDirectory(prefix="otelgrade-idle-") as tmp:
        for _ in range(args.rounds):
            for workers in counts:
                for repo in repos:
                    got[(str(repo), workers)].append(idle_cpu(repo, workers, args.seconds, Path(tmp)))
    if args.json:
        print(json.dumps([{"repo": r, "workers": w, "ms_per_s": v} for (r, w), v in got.items()]))
        return
    print("| checkout | workers | idle CPU ms/s, median (min-max) | rounds |")
    print("|---|---|---|---|")
    for (checkout, workers), values in got.items():
        print(
            f"| {checkout} | {workers} | {statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f}) | "
            + ", ".join(f"{v:.1f}" for v in values)
            + " |"
        )


if __name__ == "__main__":
    main()
