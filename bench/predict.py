"""What the benchmark's figures predict for a machine with more cores: the server's CPU per span with 1, 2 and 4
grading workers as a multiple of the floor's (parsing the same bytes in the benchmark's process), and the spans/s
that cost allows on C cores.

On C cores the service takes at most C seconds of CPU a second, and its receiving process (one process: the
listeners, the split by trace, the pipes) at most one of them, so

    predicted spans/s = min(C / CPU per span, 1 / the receiving process's CPU per span)

with one worker (one process, no split) at most 1 / CPU per span whatever C. The figures are medians of the
rounds; the end-to-end spans/s measured on this machine stands beside them (its load generator shares the same
cores, so it stays below what is predicted for the machine's cores).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

CORES = (2, 4, 8, 16)


def _median(rounds: Sequence[Any], figure: Callable[[Any], float | None]) -> float | None:
    known = [v for r in rounds if (v := figure(r)) is not None]
    return statistics.median(known) if known else None


def predicted(cores: int, workers: int, cpu_us: float, front_us: float | None) -> float:
    """Spans/s on `cores` cores with `workers` grading workers whose CPU per span (all processes) is `cpu_us`, of
    which the receiving process's own is `front_us`."""
    if workers <= 1 or not front_us:
        return 1e6 / cpu_us
    return min(cores * 1e6 / cpu_us, 1e6 / front_us)


def table(rows: Sequence[Any]) -> list[str]:
    """Markdown lines: per load, protocol and number of workers, the CPU per span against the floor's and one
    worker's, and the spans/s predicted per core count beside the measured ones (rows: `bench.run.Row`)."""
    measured = [r for r in rows if r.workers is not None and r.saturation]
    if not measured:
        return []
    head = [
        "load",
        "protocol",
        "workers",
        "server CPU µs/span",
        "floor CPU µs/span",
        "× floor",
        "× one worker",
        "receiving process µs/span",
        *(f"predicted spans/s, {c} cores" for c in CORES),
        "measured e2e spans/s",
    ]
    lines = ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in measured:
        cpu = _median(row.saturation, lambda r: r.cpu_us_per_span)
        floor = _median(row.saturation, lambda r: r.floor_cpu_us_per_span)
        front = _median(row.saturation, lambda r: r.front_cpu_us_per_span)
        one = next((o for o in rows if (o.load, o.protocol, o.workers) == (row.load, row.protocol, 1)), None)
        one_cpu = _median(one.saturation, lambda r: r.cpu_us_per_span) if one else None
        if cpu is None:
            continue
        cells = [
            row.load,
            row.protocol,
            str(row.workers),
            f"{cpu:.1f}",
            f"{floor:.1f}" if floor else "-",
            f"{cpu / floor:.2f}" if floor else "-",
            f"{cpu / one_cpu:.2f}" if one_cpu else "-",
            f"{front:.1f}" if front else "-",
            *(f"{predicted(c, row.workers, cpu, front):,.0f}" for c in CORES),
            f"{_median(row.saturation, lambda r: r.spans_per_s) or 0:,.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines
