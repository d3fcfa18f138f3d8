"""Conversation tracking: what holding open conversations costs in memory against their caps, and in CPU per run.

Holding (the default): each measurement runs in a fresh Python process holding one `Conversations` with a clock
that never moves (no conversation settles). It adds `--conversations` conversations of `--turns` turns each,
every turn a copy of a real captured turn (`tests/fixtures/conversations`, every framework, rebuilt as the
server rebuilds it) under its own trace id and its conversation's id, and reports the conversations still open,
the turns' JSON and what it is held as (compressed), the bytes the holder accounts for, how many it evicted to
stay within the caps, the process's resident memory growth (what the machine pays, Python objects included)
against the byte cap, and the CPU time per held turn.

Per-run cost (`--tracking`): the bench's loads (`bench.run`'s agent mix, whose runs name a conversation each, and
the captured traces) sent to `otelgrade serve` with `bench.run`'s suite alone, then with a `level: conversation`
suite beside it (the same code graders, `conversations.settle` 1 s). Each round starts a fresh server, sends the
load over gRPC and waits until every conversation it names has been graded and no run has been graded for 1 s
(the runs-only server: 2 s, so both idle and are scraped about as long); the server's CPU time over the round
(all threads, from /proc) is divided by the runs it graded. The machine is shared: CPU time, not wall time, is
the figure.

usage: python -m bench.conversations [--conversations 100000] [--turns 3] [--max-bytes 640MiB,2GiB] [--json]
       python -m bench.conversations --tracking [--repeat 3] [--agent-copies 10] [--captured-copies 10]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import loadgen
from bench.loads import Load, agent_mix, captured
from bench.run import DETERMINISTIC, SETTLE, Server, _ports, serve, server_config
from otelgrade.core.settings import ConversationSettings
from otelgrade.core.trajectory import Trajectory

REPO = Path(__file__).resolve().parents[1]
CAPTURES = REPO / "tests" / "fixtures" / "conversations"
UNITS = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def captured_turns() -> list[Trajectory]:
    """Every turn of every captured conversation, rebuilt: the shapes and sizes real frameworks send."""
    from otelgrade.intake.decode import decode_traces
    from otelgrade.rebuild import rebuild

    turns: list[Trajectory] = []
    for folder in sorted(p for p in CAPTURES.glob("*/*") if p.is_dir() and p.name != "dump"):
        spans = [s for path in sorted(folder.glob("*.pb")) for s in decode_traces(path.read_bytes()).spans]
        turns.extend(rebuild(spans))
    return turns


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def hold(conversations: int, turns: int, max_bytes: int) -> dict[str, Any]:
    """In this process: hold the conversations, then measure (the numbers are this process's own)."""
    from otelgrade.grade.conversations import Conversations

    templates = captured_turns()
    settings = ConversationSettings(max_conversations=max(conversations, 1), max_bytes=max_bytes)
    holder = Conversations(settings, clock=lambda: 0.0)  # time stands still: nothing settles
    gc.collect()
    before = rss_bytes()
    evicted = 0
    cpu = 0.0  # in `add` only, not in making the turn (a copy of a template, freed once held as JSON)
    for c in range(conversations):
        for t in range(turns):
            run = templates[(c * turns + t) % len(templates)].model_copy(
                update={"trace_id": os.urandom(16).hex(), "conversation_id": f"bench-{c}", "ends_conversation": False}
            )
            began = time.process_time()
            evicted += sum(1 for done in holder.add(run) if done.reason == "evicted")
            cpu += time.process_time() - began
    gc.collect()
    after = rss_bytes()
    held_bytes = sum(len(body) for held in holder.open.values() for body in held.turns.values())  # compressed
    json_bytes = sum(len(body) for held in holder.open.values() for _, body in held.turns_json())
    return {
        "conversations": conversations,
        "turns_each": turns,
        "max_bytes": max_bytes,
        "open": len(holder.open),
        "accounted_bytes": holder.nbytes,
        "evicted": evicted,
        "rss_growth_bytes": after - before,
        "cpu_us_per_turn": cpu / (conversations * turns) * 1e6,
        "json_bytes": json_bytes,
        "held_bytes": held_bytes,
        "turn_bytes_mean": json_bytes / max(1, sum(len(h.turns) for h in holder.open.values())),
    }


def size(text: str) -> int:
    for unit, factor in UNITS.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "byte cap",
        "conversations × turns added",
        "open at the end",
        "evicted",
        "turns' JSON held",
        "as held (compressed)",
        "accounted (JSON + bookkeeping)",
        "RSS growth",
        "RSS growth / cap",
        "CPU µs per turn held",
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = (
            f"{r['max_bytes'] / 1024**2:,.0f} MiB",
            f"{r['conversations']:,} × {r['turns_each']}",
            f"{r['open']:,}",
            f"{r['evicted']:,}",
            f"{r['json_bytes'] / 1024**2:,.1f} MiB",
            f"{r.get('held_bytes', r['json_bytes']) / 1024**2:,.1f} MiB",
            f"{r['accounted_bytes'] / 1024**2:,.1f} MiB",
            f"{r['rss_growth_bytes'] / 1024**2:,.1f} MiB",
            f"{r['rss_growth_bytes'] / r['max_bytes']:.2f}",
            f"{r['cpu_us_per_turn']:.1f}",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


CONVERSATION_SETTLE = 1.0  # seconds


def with_conversation_suite(config: dict[str, Any]) -> dict[str, Any]:
    graders = [*(dict(g) for g in DETERMINISTIC), {"name": "turns", "type": "max_turns", "max": 100}]
    suite = {"name": "conversations", "level": "conversation", "graders": graders}
    return {**config, "conversations": {"settle": f"{CONVERSATION_SETTLE}s"}, "suites": [*config["suites"], suite]}


def graded_so_far(server: Server) -> tuple[float, float]:
    samples = loadgen.scrape(server.metrics_url)
    return (
        loadgen.total(samples, "otelgrade_runs_graded_total"),
        loadgen.total(samples, "otelgrade_conversations_graded_total"),
    )


def conversations_in(load: Load) -> int:
    """How many conversations one issue of the load holds (the ids its runs name, as the server reads them)."""
    from otelgrade.intake.decode import decode_traces
    from otelgrade.rebuild import rebuild

    spans = [s for body in load.issue() for s in decode_traces(body).spans]
    return len({run.conversation_id for run in rebuild(spans) if run.conversation_id})


def wait_until_graded(server: Server, conversations: int, quiet: float = 1.0, timeout: float = 300.0) -> float:
    """Until `conversations` conversations are graded and no run has been graded for `quiet` seconds; the runs
    graded."""
    deadline = time.monotonic() + timeout
    last, since = graded_so_far(server), time.monotonic()
    while last[1] < conversations or time.monotonic() - since < quiet:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server was still grading after {timeout:.0f}s ({last})")
        time.sleep(0.1)
        now = graded_so_far(server)
        if now != last:
            last, since = now, time.monotonic()
    return last[0]


def tracking_rounds(workdir: Path, load: Load, conversations: bool, repeat: int) -> dict[str, Any]:
    """`repeat` rounds of `load`, each against a fresh server (every round's conversations are new): its CPU
    time per run graded, from the first request sent until every conversation of the round is graded."""
    expected = conversations_in(load) if conversations else 0
    name = f"{load.name.replace(' ', '-')}-{'conversations' if conversations else 'runs'}"
    per_run: list[float] = []
    runs: list[float] = []
    for _ in range(repeat):
        config = server_config(_ports(), SETTLE)
        if conversations:
            config = with_conversation_suite(config)
        with serve(workdir, name, config) as server:
            cpu_before = loadgen.cpu_seconds(server.pid) or 0.0
            send = loadgen.grpc_sender(server.grpc)
            for body in load.issue():
                send(body)
            # the runs-only server waits out a settle too: both are scraped and idle about as long
            runs.append(
                wait_until_graded(server, expected, quiet=1.0 + (0.0 if conversations else CONVERSATION_SETTLE))
            )
            per_run.append(((loadgen.cpu_seconds(server.pid) or 0.0) - cpu_before) / max(1.0, runs[-1]) * 1e6)
    return {
        "load": load.name,
        "conversation_suite": conversations,
        "runs": statistics.median(runs),
        "spans": sum(load.span_counts),
        "cpu_us_per_run": per_run,
        "conversations_graded": expected,
    }


def spread(values: list[float]) -> str:
    values = sorted(values)
    return f"{statistics.median(values):,.0f} ({values[0]:,.0f}-{values[-1]:,.0f})"


def tracking_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| load | runs graded (spans) per round | server CPU µs per run, runs only | with a conversation suite | "
        "cost of conversation tracking per run | conversations graded per round |",
        "|---|---|---|---|---|---|",
    ]
    for plain, tracked in zip(rows[::2], rows[1::2], strict=True):
        cost = statistics.median(tracked["cpu_us_per_run"]) - statistics.median(plain["cpu_us_per_run"])
        lines.append(
            f"| {plain['load']} | {plain['runs']:,.0f} ({plain['spans']:,}) | {spread(plain['cpu_us_per_run'])} | "
            f"{spread(tracked['cpu_us_per_run'])} | {cost:+,.0f} µs "
            f"({cost / statistics.median(plain['cpu_us_per_run']):+.0%}) | "
            f"{tracked['conversations_graded']:,} |"
        )
    return "\n".join(lines)


def tracking(args: argparse.Namespace) -> int:
    loads = [agent_mix(1000, 10, 50).scaled(args.agent_copies), captured(args.captured_copies)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="otelgrade-bench-") as tmp:
        for load in loads:
            for conversations in (False, True):
                rows.append(tracking_rounds(Path(tmp), load, conversations, args.repeat))
    print(json.dumps(rows, indent=1) if args.json else tracking_table(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=100_000)
    p.add_argument("--turns", type=int, default=3, help="turns per conversation")
    p.add_argument("--max-bytes", default="640MiB,2GiB", help="byte caps to measure, one process each")
    p.add_argument("--json", action="store_true")
    p.add_argument("--tracking", action="store_true", help="the per-run CPU cost on the bench's loads instead")
    p.add_argument("--repeat", type=int, default=3, help="--tracking: rounds per server")
    p.add_argument("--agent-copies", type=int, default=10, help="--tracking: copies of the 1,000-run agent mix")
    p.add_argument("--captured-copies", type=int, default=10, help="--tracking: copies of the captured traces")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process: one measurement
    args = p.parse_args(argv)
    if args.tracking:
        return tracking(args)
    caps = [size(c) for c in args.max_bytes.split(",")]
    if args.one:
        print(json.dumps(hold(args.conversations, args.turns, caps[0])))
        return 0
    rows = []
    for cap in caps:
        command = [sys.executable, "-m", "bench.conversations", "--one", "--max-bytes", str(cap)]
        command += ["--conversations", str(args.conversations), "--turns", str(args.turns)]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout))
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
