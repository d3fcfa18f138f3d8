"""The otelgrade benchmark: starts `otelgrade serve` on free ports, loads it, prints one table.

For each load (the synthetic agent mix; the captured fixture traces replayed with fresh trace ids) and each
protocol (OTLP/gRPC, OTLP/HTTP), one server with code graders only, `assembly.settle` 0.2 s and
`idle_timeout` 1 s (captured traces without a root span close on it) takes
`--repeat` rounds of:
  saturation  every request sent as fast as it is taken: end-to-end spans/s (first byte sent to last run
              graded), the decode+walk floor on the same bytes in this process, their ratio, the server's
              CPU time per span (all its threads, from /proc) and its peak RSS;
  half rate   the same load paced at half the spans/s the round just sustained, for `--half-seconds`:
              the grading delay p50/p99 (from the server's histogram, interpolated within buckets).
Then, per load, a server with a long settle holds every span of `--repeat` successive batches: RSS growth
per held span, beyond the span's payload (its share of the request bytes).
With `--workers 1,2` every load and protocol is measured once per number of grading workers (`OTELGRADE_WORKERS`),
side by side: CPU per span counts the receiving process and its workers, RSS is the receiving process's and the
largest worker's peak, and a line per load says how end-to-end spans/s scales with the workers; a second table
(`bench.predict`) gives the CPU per span against the floor's and one worker's, and the spans/s it predicts on
machines with more cores. Last, per load, the in-process stages (receive, rebuild, grade) against the floor in
the benchmark's own process (`bench.stages`).
Every figure is printed as the median (min-max) of the rounds. `--judge S` adds the agent mix over gRPC
with a rubric judge at `sample: 1.0` that answers after S seconds: what a slow judge costs ingest.

usage: python -m bench.run [--repeat 3] [--workers 1,2] [--agent-copies 10] [--captured-copies 10] [--judge 2] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench import loadgen, predict, stages
from bench.loads import Load, agent_mix, captured
from tests.fake_openai import FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[1]

# Code graders every run goes through (all pass on the load generator's runs).
DETERMINISTIC: list[dict[str, Any]] = [
    {"name": "completed", "type": "task_completed"},
    {"name": "tool_budget", "type": "max_tool_calls", "max_tool_calls": 50},
    {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
]
JUDGE: dict[str, Any] = {
    "name": "helpful",
    "type": "rubric",
    "prompt": "Did the agent help the user? {trajectory}",
    "sample": 1.0,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running `otelgrade serve` subprocess and where to reach it."""

    proc: subprocess.Popen[bytes]
    grpc: str
    http: str
    metrics_url: str
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid


def server_config(ports: dict[str, int], settle: str, judge_url: str | None = None, **assembly: Any) -> dict[str, Any]:
    graders: list[dict[str, Any]] = [dict(g) for g in DETERMINISTIC]
    config: dict[str, Any] = {
        "receivers": {"grpc": f"127.0.0.1:{ports['grpc']}", "http": f"127.0.0.1:{ports['http']}"},
        "metrics": {"endpoint": f"127.0.0.1:{ports['metrics']}"},
        "assembly": {"settle": settle, "idle_timeout": IDLE_TIMEOUT, **assembly},
        "suites": [{"name": "bench", "graders": graders}],
    }
    if judge_url:
        graders.append(dict(JUDGE))
        config["judge"] = {"model": "bench-judge", "base_url": judge_url, "api_key_env": "BENCH_JUDGE_KEY"}
    return config


@contextlib.contextmanager
def serve(
    workdir: Path,
    name: str,
    config: dict[str, Any],
    timeout: float = 30.0,
    workers: int | None = None,
    repo: Path = REPO,
) -> Iterator[Server]:
    """Start `otelgrade serve` with `config` (and `workers` grading workers; None: as the environment says; the
    code of the checkout `repo`), wait for /readyz, and SIGTERM it (waiting for exit) afterwards."""
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    log = workdir / f"{name}.log"
    env = {**os.environ, "BENCH_JUDGE_KEY": "bench", "OTELGRADE_LOG_LEVEL": "WARNING"}
    if workers is not None:
        env["OTELGRADE_WORKERS"] = str(workers)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "otelgrade", "serve", "--config", str(path)],
            cwd=repo,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    metrics = config["metrics"]["endpoint"]
    server = Server(proc, config["receivers"]["grpc"], config["receivers"]["http"], f"http://{metrics}/metrics", log)
    try:
        _wait_ready(server, timeout)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(server: Server, timeout: float) -> None:
    ready = server.metrics_url.rsplit("/", 1)[0] + "/readyz"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(
                f"otelgrade serve exited with {server.proc.returncode}:\n{server.log.read_text()[-3000:]}"
            )
        with contextlib.suppress(OSError, urllib.error.URLError), urllib.request.urlopen(ready, timeout=1) as resp:
            if resp.status == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"otelgrade serve not ready after {timeout:.0f}s:\n{server.log.read_text()[-3000:]}")


def _ports() -> dict[str, int]:
    return {"grpc": free_port(), "http": free_port(), "metrics": free_port()}


SETTLE = "0.2s"
# Some captured traces have no root span (the capture holds part of a trace): they close after this much quiet.
IDLE_TIMEOUT = "1s"


@dataclass
class Row:
    """The rounds of one load over one protocol against one server."""

    load: str
    protocol: str
    workers: int | None = None  # grading workers; None: as the environment says
    saturation: list[loadgen.Result] = field(default_factory=list)
    half_rate: list[loadgen.Result] = field(default_factory=list)


@dataclass
class Memory:
    load: str
    spans_held: list[float] = field(default_factory=list)  # per batch
    bytes_per_span: list[float] = field(default_factory=list)  # RSS growth per held span, per batch
    payload_bytes_per_span: float = 0.0

    @property
    def beyond_payload(self) -> list[float]:
        return [b - self.payload_bytes_per_span for b in self.bytes_per_span]


def measure(
    server: Server, load: Load, protocol: str, args: argparse.Namespace
) -> tuple[loadgen.Result, loadgen.Result]:
    """One round: the load at saturation, then paced at half the rate it sustained."""
    target = server.grpc if protocol == "grpc" else server.http

    def run(load: Load, **kw: Any) -> loadgen.Result:
        return loadgen.run_load(
            load.issue(),
            load.span_counts,
            load.runs,
            protocol,
            target,
            server.metrics_url,
            concurrency=args.concurrency,
            server_pid=server.pid,
            **kw,
        )

    saturated = run(load)
    rate = (saturated.spans_per_s or 0.0) / 2
    per_copy = saturated.spans / load.copies
    copies = max(1, math.ceil(rate * args.half_seconds / per_copy))
    return saturated, run(load.scaled(copies), rate=rate, floor=False)


def measure_memory(workdir: Path, load: Load, batches: int) -> Memory:
    """Hold every span (settle longer than the test) of `batches` successive issues of `load`; per batch,
    the server's RSS growth over the spans it added."""
    config = server_config(_ports(), "300s", idle_timeout="600s", max_traces=10_000_000)
    memory = Memory(load.name)
    with serve(workdir, "memory", config) as server:
        send = loadgen.grpc_sender(server.grpc)
        held = 0.0
        payload = 0
        for _ in range(batches):
            time.sleep(0.5)
            before = loadgen.proc_status_kb(server.pid, "VmRSS") or 0
            bodies = load.issue()
            payload += sum(len(b) for b in bodies)
            for body in bodies:
                send(body)
            want, start = held + sum(load.span_counts), held
            deadline = time.monotonic() + 120
            while held < want and time.monotonic() < deadline:
                time.sleep(0.1)
                held = loadgen.total(loadgen.scrape(server.metrics_url), "otelgrade_spans_in_flight")
            time.sleep(0.5)
            after = loadgen.proc_status_kb(server.pid, "VmRSS") or 0
            memory.spans_held.append(held)
            memory.bytes_per_span.append((after - before) * 1024 / max(1.0, held - start))
        with contextlib.suppress(ProcessLookupError):
            server.proc.kill()  # grading every held span at shutdown is not what is measured here
    memory.payload_bytes_per_span = payload / max(1.0, held)
    return memory


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    from google.protobuf.internal import api_implementation

    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"protobuf {api_implementation.Type()} backend, {platform.system()} {platform.release()}"
    )


def _spread(values: Sequence[float | None], spec: str = ",.0f", scale: float = 1.0) -> str:
    """median (min-max) of the values that are known."""
    known = sorted(v * scale for v in values if v is not None and math.isfinite(v))
    if not known:
        return "-"
    med = format(statistics.median(known), spec)
    return med if len(known) == 1 else f"{med} ({format(known[0], spec)}-{format(known[-1], spec)})"


def table(rows: Sequence[Row], memory: Sequence[Memory], judged: Row | None = None) -> str:
    head = (
        "load",
        "protocol",
        "workers",
        "spans",
        "e2e spans/s",
        "floor spans/s",
        "ratio",
        "server CPU µs/span",
        "peak RSS MB (worker)",
        "delay p50 ms",
        "delay p99 ms",
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in [*rows, *([judged] if judged else [])]:
        sat, half = row.saturation, row.half_rate
        worker_rss = [r.worker_rss_mb for r in sat if r.worker_rss_mb]
        cells = (
            row.load,
            row.protocol,
            "-" if row.workers is None else str(row.workers),
            f"{sat[0].spans:,}",
            _spread([r.spans_per_s for r in sat]),
            _spread([r.floor_spans_per_s for r in sat]),
            _spread([r.ratio for r in sat], ".2f"),
            _spread([r.cpu_us_per_span for r in sat], ".1f"),
            _spread([max(r.peak_rss_mb or 0 for r in sat)]) + (f" ({max(worker_rss):,.0f})" if worker_rss else ""),
            _spread([r.grading_delay_p50_s for r in half], ".0f", 1000),
            _spread([r.grading_delay_p99_s for r in half], ".0f", 1000),
        )
        lines.append("| " + " | ".join(cells) + " |")
    lines += _scaling(rows)
    lines += predict.table(rows)
    if memory:
        lines += ["", "| load | spans held | RSS bytes per held span | payload bytes per span | beyond payload |"]
        lines.append("|---|---|---|---|---|")
        for m in memory:
            lines.append(
                f"| {m.load} | {m.spans_held[-1]:,.0f} | {_spread(m.bytes_per_span)} | "
                f"{m.payload_bytes_per_span:,.0f} | {_spread(m.beyond_payload)} |"
            )
    if judged:
        base = next(r for r in rows if r.load == "agent mix" and r.protocol == judged.protocol)
        sent = statistics.median(r.spans / r.send_s for r in judged.saturation)
        sent_base = statistics.median(r.spans / r.send_s for r in base.saturation)
        lines += ["", f"{judged.load} over {judged.protocol}: ingest {sent / sent_base - 1:+.0%} against no judge"]
    return "\n".join(lines)


def _scaling(rows: Sequence[Row]) -> list[str]:
    """Per load and protocol measured with several numbers of workers: end-to-end spans/s against one worker."""
    lines = []
    for one in (r for r in rows if r.workers == 1):
        for more in (r for r in rows if (r.load, r.protocol) == (one.load, one.protocol) and (r.workers or 0) > 1):
            base = statistics.median(r.spans_per_s or 0.0 for r in one.saturation)
            rate = statistics.median(r.spans_per_s or 0.0 for r in more.saturation)
            if base:
                lines.append(f"{one.load} over {one.protocol}: {more.workers} workers {rate / base:.2f}x one worker")
    return ["", *lines] if lines else []


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--agent-traces", type=int, default=1000, help="agent-mix runs per copy")
    p.add_argument("--agent-copies", type=int, default=10, help="copies of the agent mix per saturation round")
    p.add_argument("--spans-per-trace", type=int, default=10)
    p.add_argument("--batch-traces", type=int, default=50, help="agent-mix runs per export request")
    p.add_argument("--captured-copies", type=int, default=10, help="copies of the captured traces per round")
    p.add_argument("--loads", default="agent,captured")
    p.add_argument("--protocols", default="grpc,http")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--workers", help="grading workers to measure, side by side (e.g. 1,2); default: the environment's")
    p.add_argument("--repeat", type=int, default=3, help="rounds per server (and memory batches per load)")
    p.add_argument("--half-seconds", type=float, default=3.0, help="how long each half-rate load lasts")
    p.add_argument("--no-memory", action="store_true", help="skip the held-span memory measurement")
    p.add_argument("--judge", type=float, metavar="SECONDS", help="add the agent mix with a judge this slow")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    args = p.parse_args(argv)
    chosen = args.loads.split(",")
    loads = (
        [agent_mix(args.agent_traces, args.spans_per_trace, args.batch_traces).scaled(args.agent_copies)]
        if "agent" in chosen
        else []
    )
    loads += [captured(args.captured_copies)] if "captured" in chosen else []
    rows: list[Row] = []
    memory: list[Memory] = []
    judged: Row | None = None
    with tempfile.TemporaryDirectory(prefix="otelgrade-bench-") as tmp:
        workdir = Path(tmp)
        for load in loads:
            for protocol in args.protocols.split(","):
                for workers in [int(w) for w in args.workers.split(",")] if args.workers else [None]:
                    rows.append(_rounds(workdir, load, protocol, args, workers=workers))
            if not args.no_memory:
                memory.append(measure_memory(workdir, load, args.repeat))
        if args.judge is not None and loads and loads[0].name == "agent mix":
            with FakeOpenAI(default=Reply.grade(0.9, delay=args.judge)) as judge:
                judged = _rounds(workdir, loads[0], "grpc", args, judge.base_url)
                judged.load = f"agent mix, judge {args.judge:g} s"
    in_process = {name: stages.timed(name, args.repeat) for name in ("agent", "captured") if name in chosen}
    if args.json:
        doc = {
            "machine": machine(),
            "stages": in_process,
            "rows": [asdict(r) for r in [*rows, *([judged] if judged else [])]],
            "memory": [{**asdict(m), "beyond_payload": m.beyond_payload} for m in memory],
        }
        print(json.dumps(doc, indent=2))
    else:
        print(f"machine: {machine()}; settle {SETTLE}, median (min-max) of {args.repeat} rounds\n")
        print(table(rows, memory, judged))
        print("\nIn process (`bench.stages`: CPU µs per span, least of the rounds, against the floor's):\n")
        print("\n".join([*stages.HEAD, *(stages.row(name, figures) for name, figures in in_process.items())]))
    return 0


def _rounds(
    workdir: Path,
    load: Load,
    protocol: str,
    args: argparse.Namespace,
    judge_url: str | None = None,
    workers: int | None = None,
) -> Row:
    row = Row(load.name, protocol, workers)
    name = f"{load.name.replace(' ', '-')}-{protocol}-{workers or 'env'}"
    with serve(workdir, name, server_config(_ports(), SETTLE, judge_url=judge_url), workers=workers) as server:
        for _ in range(args.repeat):
            saturated, half = measure(server, load, protocol, args)
            row.saturation.append(saturated)
            row.half_rate.append(half)
    return row


if __name__ == "__main__":
    raise SystemExit(main())
