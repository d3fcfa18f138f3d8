"""A backfill of the traffic archive: `otelgrade grade --since` over an archive of `--runs` agent runs (10 spans
each, written by the archive sink itself), in a process of its own. Prints the archive's size, the seconds the
backfill took and its peak RSS: a reader that holds one trace at a time stays near its baseline however large the
archive; one that gathers the whole archive first grows with it.

usage: python -m bench.backfill [--runs 40000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.loadgen import encode_requests
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.spans import AnySpan
from otelgrade.export.sinks import read_sink
from otelgrade.export.sinks.archive import ArchiveSink, ArchiveSinkSettings
from otelgrade.intake.decode import decode_traces


def write_archive(folder: Path, runs: int, file_bytes: str = "8MB") -> int:
    """An archive of `runs` agent runs as the server keeps them, in files of about `file_bytes`; returns its size in
    bytes."""
    settings = read_sink({"type": "archive", "path": str(folder), "max_bytes": "100GB", "file_bytes": file_bytes})
    assert isinstance(settings, ArchiveSinkSettings)
    sink = ArchiveSink(settings, Metrics())
    for body in encode_requests(runs, spans_per_trace=10, per_request=100):
        traces: dict[str, list[AnySpan]] = {}
        for span in decode_traces(body).spans:
            traces.setdefault(span.trace_id, []).append(span)
        for trace_id, spans in traces.items():
            sink.keep_trace(trace_id, spans, [])
            sink.write([Grade(trace_id, spans[-1].span_id, "default", "completed", 1.0, True, "pass", "")])
    sink.close()
    return sum(f.stat().st_size for f in folder.iterdir())


def backfill(folder: Path, *extra: str) -> tuple[float, float, int, str]:
    """Seconds, peak RSS (MiB) and exit code of `otelgrade grade --since 30d` over the archive, and its stderr."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "otelgrade", "grade", "--since", "30d", "--format", "json", *extra, str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    took = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return took, peak, done.returncode, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40_000)
    parser.add_argument("--keep", type=Path, help="write the archive here and leave it (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch) / "archive"
        size = write_archive(folder, args.runs)
        took, peak, code, errors = backfill(folder)
    print(f"{args.runs:,} runs, archive {size / 1e6:.1f} MB: backfilled in {took:.1f} s, peak RSS {peak:.0f} MiB")
    if code not in (0, 1):
        raise SystemExit(f"otelgrade grade exited {code}: {errors[-2000:]}")


if __name__ == "__main__":
    main()
