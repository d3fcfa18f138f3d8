"""kill -9 with a durability spool: senders push `--traces` runs over OTLP/gRPC at `otelgrade serve`; once
`--kill-at` of them are acknowledged (runs waiting to settle, a grading backlog, requests in flight) the process
gets SIGKILL. A second process on the same config (spool and JSONL sink) replays it, as a restarted service
would. Prints acknowledged runs, how many were graded, how many were lost and how many graded twice.

usage: python -m bench.kill9 [--traces 60000] [--kill-at 0.5] [--senders 8] [--fsync batch]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import loadgen
from bench.run import _ports, serve, server_config
from otelgrade.intake.decode import decode_traces


def _config(workdir: Path, fsync: str) -> dict[str, Any]:
    config = server_config(_ports(), "2s")
    config["durability"] = {"spool_dir": str(workdir / "spool"), "fsync": fsync}
    config["sinks"] = [{"type": "jsonl", "path": str(workdir / "grades.jsonl")}]
    return config


def _graded(workdir: Path) -> collections.Counter[str]:
    """Runs graded per trace id, counted by one grader's lines in the sink's file."""
    counts: collections.Counter[str] = collections.Counter()
    for path in workdir.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                grade = json.loads(line)
            except ValueError:
                continue  # the line the server is writing as we read
            if grade["grader"] == "completed":
                counts[grade["trace_id"]] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=60_000)
    parser.add_argument("--kill-at", type=float, default=0.5, help="fraction of runs acknowledged at the kill")
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--fsync", default="batch", choices=("batch", "always", "never"))
    args = parser.parse_args()
    bodies = loadgen.encode_requests(args.traces, spans_per_trace=5, per_request=20)
    trace_ids = [sorted({s.trace_id for s in decode_traces(body).spans}) for body in bodies]
    acknowledged: list[str] = []
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        with serve(workdir, "first", _config(workdir, args.fsync)) as first:
            send = loadgen.grpc_sender(first.grpc)

            def sender(index: int) -> None:
                for body, ids in list(zip(bodies, trace_ids, strict=True))[index :: args.senders]:
                    try:
                        send(body)
                    except Exception:
                        return  # the server is gone
                    with lock:
                        acknowledged.extend(ids)

            threads = [threading.Thread(target=sender, args=(i,), daemon=True) for i in range(args.senders)]
            for thread in threads:
                thread.start()
            while len(acknowledged) < args.kill_at * args.traces:
                time.sleep(0.001)
            first.proc.kill()
            first.proc.wait()
            killed_at = len(acknowledged)
            for thread in threads:
                thread.join()
        before_restart = len(_graded(workdir))
        with serve(workdir, "second", _config(workdir, args.fsync)) as second:
            last, stable_since = -1, time.monotonic()
            while time.monotonic() - stable_since < 5:  # graded count unchanged for 5 s: done
                now = len(_graded(workdir))
                if now != last:
                    last, stable_since = now, time.monotonic()
                time.sleep(0.5)
            with contextlib.suppress(ProcessLookupError):
                second.proc.terminate()
        graded = _graded(workdir)
    acked = set(acknowledged)
    print(
        f"{args.traces:,} runs sent by {args.senders} gRPC senders, SIGKILL after {killed_at:,} acknowledged "
        f"(fsync {args.fsync})"
    )
    print(
        f"graded before the kill: {before_restart:,}; acknowledged: {len(acked):,}; graded in the end: "
        f"{len(acked & set(graded)):,}; lost: {len(acked - set(graded)):,}; "
        f"graded twice: {sum(1 for n in graded.values() if n > 1):,}"
    )


if __name__ == "__main__":
    main()
