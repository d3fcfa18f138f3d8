"""The otelgrade benchmark: starts `otelgrade serve` on free ports, loads it, prints one table.

Scenarios, each against its own server (so each peak RSS is its own):
  deterministic  code graders only, `assembly.settle` 0.2 s; over OTLP/gRPC, then OTLP/HTTP
  slow judge     the same plus a rubric judge at `sample: 1.0` whose endpoint answers after 2 s,
                 over OTLP/gRPC: what a slow judge costs ingest, against the deterministic gRPC row
                 (both servers up at once, their loads alternated)
  memory         a long settle, so every span stays held: server RSS growth per in-flight span

usage: python -m bench.run [--traces 20000] [--spans-per-trace 10] [--concurrency 8] [--repeat 1]
                           [--scenarios judge,memory] [--judge-delay 2] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from bench import loadgen
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
        "assembly": {"settle": settle, **assembly},
        "suites": [{"name": "bench", "graders": graders}],
    }
    if judge_url:
        graders.append(dict(JUDGE))
        config["judge"] = {"model": "bench-judge", "base_url": judge_url, "api_key_env": "BENCH_JUDGE_KEY"}
    return config


@contextlib.contextmanager
def serve(workdir: Path, name: str, config: dict[str, Any], timeout: float = 30.0) -> Iterator[Server]:
    """Start `otelgrade serve` with `config`, wait for /readyz, and SIGTERM it (waiting for exit) afterwards."""
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    log = workdir / f"{name}.log"
    env = {**os.environ, "BENCH_JUDGE_KEY": "bench", "OTELGRADE_LOG_LEVEL": "WARNING"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "otelgrade", "serve", "--config", str(path)],
            cwd=REPO,
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


def load(server: Server, protocol: str, args: argparse.Namespace) -> loadgen.Result:
    bodies = loadgen.encode_requests(args.traces, args.spans_per_trace, args.batch_traces)
    target = server.grpc if protocol == "grpc" else server.http
    return loadgen.run_load(
        bodies,
        args.spans_per_trace,
        args.traces,
        protocol,
        target,
        server.metrics_url,
        concurrency=args.concurrency,
        server_pid=server.pid,
    )


def _best(a: loadgen.Result | None, b: loadgen.Result) -> loadgen.Result:
    """The faster of two runs, by spans/s end to end (peak RSS is the process's, so the later one's)."""
    if a is None or (b.spans_per_s or 0) > (a.spans_per_s or 0):
        return b
    b_peak = b.peak_rss_mb
    return loadgen.Result(**{**asdict(a), "peak_rss_mb": b_peak})


@dataclass
class Memory:
    spans_held: float
    rss_growth_mb: float
    bytes_per_span: float
    payload_bytes_per_span: float


def measure_memory(workdir: Path, args: argparse.Namespace) -> Memory:
    """Hold every span (settle longer than the test) and divide the server's RSS growth by the spans held."""
    config = server_config(_ports(), "120s", idle_timeout="300s", max_traces=1_000_000)
    bodies = loadgen.encode_requests(args.traces, args.spans_per_trace, args.batch_traces)
    n_spans = args.traces * args.spans_per_trace
    with serve(workdir, "memory", config) as server:
        time.sleep(0.5)
        before = loadgen.proc_status_kb(server.pid, "VmRSS") or 0
        send = loadgen.grpc_sender(server.grpc)
        for body in bodies:
            send(body)
        deadline = time.monotonic() + 60
        held = 0.0
        while time.monotonic() < deadline:
            held = loadgen.total(loadgen.scrape(server.metrics_url), "otelgrade_spans_in_flight")
            if held >= n_spans:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        after = loadgen.proc_status_kb(server.pid, "VmRSS") or 0
        with contextlib.suppress(ProcessLookupError):
            server.proc.kill()  # grading 100k held spans at shutdown is not what is measured here
    growth = (after - before) * 1024
    return Memory(
        spans_held=held,
        rss_growth_mb=growth / 2**20,
        bytes_per_span=growth / held if held else float("nan"),
        payload_bytes_per_span=sum(len(b) for b in bodies) / n_spans,
    )


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def table(
    rows: Sequence[tuple[str, loadgen.Result]],
    baseline: loadgen.Result | None,
    memory: Memory | None,
    judge_requests: int | None = None,
) -> str:
    head = ("scenario", "protocol", "spans", "sent spans/s", "e2e spans/s", "floor spans/s", "ratio", "peak RSS MB")
    lines: list[tuple[str, ...]] = [(*head, "delay p99 s")]
    for scenario, r in rows:
        lines.append(
            (
                scenario,
                r.protocol,
                f"{r.spans:,}",
                _fmt(r.spans / r.send_s),
                _fmt(r.spans_per_s),
                _fmt(r.floor_spans_per_s),
                _fmt(r.ratio, ".2f"),
                _fmt(r.peak_rss_mb),
                _fmt(r.grading_delay_p99_s, ".2f"),
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    out = [
        "  ".join(
            str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    ]
    for scenario, r in rows:
        if scenario.startswith("slow judge") and baseline and r.spans_per_s and baseline.spans_per_s:
            ingest = (r.spans / r.send_s) / (baseline.spans / baseline.send_s) - 1
            e2e = r.spans_per_s / baseline.spans_per_s - 1
            out.append(
                f"slow judge vs none over {r.protocol}: ingest {ingest:+.0%}, end to end {e2e:+.0%} "
                f"({judge_requests} judge requests answered during the run)"
            )
    if memory:
        out.append(
            f"memory: {memory.spans_held:,.0f} spans held, RSS +{memory.rss_growth_mb:.0f} MB = "
            f"{memory.bytes_per_span:,.0f} bytes per in-flight span "
            f"(request payload {memory.payload_bytes_per_span:,.0f} bytes/span)"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--traces", type=int, default=20000)
    p.add_argument("--spans-per-trace", type=int, default=10)
    p.add_argument("--batch-traces", type=int, default=50)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--scenarios", default="judge,memory", help="optional scenarios beside the deterministic rows")
    p.add_argument("--repeat", type=int, default=1, help="loads per server; the best is reported")
    p.add_argument("--judge-delay", type=float, default=2.0, help="seconds the fake judge takes to answer")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    args = p.parse_args(argv)
    scenarios = set(args.scenarios.split(","))
    rows: list[tuple[str, loadgen.Result]] = []
    baseline: loadgen.Result | None = None
    memory: Memory | None = None
    judge_requests: int | None = None
    with tempfile.TemporaryDirectory(prefix="otelgrade-bench-") as tmp:
        workdir = Path(tmp)
        judge_name = f"slow judge ({args.judge_delay:g} s)"
        with contextlib.ExitStack() as stack:
            # gRPC with and without a judge: both servers up, loads alternated, best of --repeat each
            servers = {"deterministic": stack.enter_context(serve(workdir, "grpc", server_config(_ports(), "0.2s")))}
            if "judge" in scenarios:
                judge = stack.enter_context(FakeOpenAI(default=Reply.grade(0.9, delay=args.judge_delay)))
                config = server_config(_ports(), "0.2s", judge_url=judge.base_url)
                servers[judge_name] = stack.enter_context(serve(workdir, "judge", config))
            best: dict[str, loadgen.Result] = {}
            for _ in range(args.repeat):
                for name, server in servers.items():
                    best[name] = _best(best.get(name), load(server, "grpc", args))
            if "judge" in scenarios:
                judge_requests = len(judge.requests)
        rows.append(("deterministic", best["deterministic"]))
        baseline = best["deterministic"]
        with serve(workdir, "http", server_config(_ports(), "0.2s")) as server:
            http_best: loadgen.Result | None = None
            for _ in range(args.repeat):
                http_best = _best(http_best, load(server, "http", args))
            assert http_best is not None
            rows.append(("deterministic", http_best))
        if judge_name in best:
            rows.append((judge_name, best[judge_name]))
        if "memory" in scenarios:
            memory = measure_memory(workdir, args)
    if args.json:
        doc = {
            "runs": [{"scenario": s, **asdict(r)} for s, r in rows],
            "memory": asdict(memory) if memory else None,
            "judge_requests": judge_requests,
        }
        print(json.dumps(doc, indent=2))
    else:
        print(table(rows, baseline, memory, judge_requests))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
