"""No acknowledged conversation turn is lost when a grading worker is killed (kill -9) under conversation load:
`otelgrade serve` with two workers and a spool, 300 three-turn conversations sent by the SDK's OTLP/HTTP exporter
(each turn its own trace, so a turn is rebuilt by the worker owning its trace and held by the worker owning its
conversation), each worker killed once while turns are on their way. Every conversation is graded with its three
turns: a turn on its way to a dead worker waits for it, and one its holder never wrote down is sent again."""

from __future__ import annotations

import collections
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.settings import WORKERS_ENV
from tests.conftest import ServeProcess
from tests.conversation_turns import turn
from tests.intake.test_spool_durability import send, wait_until
from tests.service.workers.test_front import workers_of

CONVERSATIONS = 300
THREE = {
    "name": "whole",
    "level": "conversation",
    "graders": [{"name": "three", "type": "max_turns", "max": 2}],  # fails once a conversation holds 3 turns
}


@pytest.fixture(autouse=True)
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_ENV, raising=False)


def rounds(conversations: int, turns: int) -> list[list[tuple[str, Sequence[ReadableSpan]]]]:
    """Round k: turn k of every conversation, each as (trace id, its spans)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("support.agent")
    histories: list[list[dict[str, Any]]] = [[] for _ in range(conversations)]
    out = []
    for number in range(turns):
        for index, history in enumerate(histories):
            turn(tracer, history, f"question {number}", f"answer {number}", [], {"gen_ai.conversation.id": f"c{index}"})
        by_trace: dict[str, list[ReadableSpan]] = collections.defaultdict(list)
        for span in memory.get_finished_spans():
            by_trace[f"{span.context.trace_id:032x}"].append(span)
        memory.clear()
        out.append(list(by_trace.items()))
    return out


def kill_worker(server: ServeProcess, index: int, times: int = 1) -> None:
    """kill -9 one grading worker, `times` in a row (each time as soon as it was started again, so it stays down
    longer: a worker that exits before it is ready waits longer to be started again), then wait for its restart."""
    for _ in range(times):
        killed = workers_of(server)[index]
        os.kill(killed, signal.SIGKILL)
        wait_until(lambda pid=killed: len(workers_of(server)) == 2 and pid not in workers_of(server), 30, "restarted")


def final_outcomes(*servers: ServeProcess) -> dict[str, str]:
    """Each conversation's latest `three` outcome (the services one after the other, on one spool)."""
    return {g["conversation_id"]: g["outcome"] for s in servers for g in s.grades() if g["level"] == "conversation"}


def all_held(*servers: ServeProcess) -> Callable[[], bool]:
    def check() -> bool:
        outcomes = final_outcomes(*servers)
        return len(outcomes) == CONVERSATIONS and all(o == "fail" for o in outcomes.values())

    return check


def report(*servers: ServeProcess) -> None:
    outcomes = final_outcomes(*servers)
    missing = sorted(cid for cid, outcome in outcomes.items() if outcome != "fail")
    dropped = sum(s.metric("otelgrade_log_records_dropped_total", {"reason": "worker_down"}) for s in servers[-1:])
    print(f"conversations graded {len(outcomes)}, with a turn missing {len(missing)}; worker_down {dropped}")


def config_for(spool: Path) -> dict[str, Any]:
    return {
        "server": {"workers": 2},
        "durability": {"spool_dir": str(spool)},
        "assembly": {"settle": "1s"},
        "conversations": {"settle": "3s"},
        "suites": [THREE],
    }


def test_kill_9_of_each_grading_worker_loses_no_acknowledged_turn(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = serve(config_for(tmp_path / "spool"))
    exporter = OTLPSpanExporter(endpoint=f"{server.http_url}/v1/traces", timeout=30)
    acknowledged: list[str] = []
    first, second, third = rounds(CONVERSATIONS, 3)
    send(exporter, first, acknowledged)
    send(exporter, second, acknowledged)
    kill_worker(server, 1, times=2)  # the second turns settle, and are passed on, while it is down
    send(exporter, third, acknowledged)
    kill_worker(server, 0)
    assert len(acknowledged) == 3 * CONVERSATIONS
    try:
        wait_until(all_held(server), 60, "every conversation graded with its three turns")
    finally:
        report(server)
    assert server.stop() == 0


def test_kill_9_of_the_receiving_process_loses_no_acknowledged_turn(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = serve(config_for(tmp_path / "spool"))
    exporter = OTLPSpanExporter(endpoint=f"{first.http_url}/v1/traces", timeout=30)
    acknowledged: list[str] = []
    turns = rounds(CONVERSATIONS, 3)
    send(exporter, turns[0], acknowledged)
    send(exporter, turns[1], acknowledged)
    wait_until(lambda: first.metric("otelgrade_traces_completed_total") >= 2 * CONVERSATIONS - 20, 30, "turns rebuilt")
    first.kill()  # kill -9 while the last turns are graded and passed on; the workers die with it
    wait_until(lambda: not workers_of_dead(first), 10, "the workers gone")
    second = serve(config_for(tmp_path / "spool"))  # replays the spool and the conversations' journals
    send(OTLPSpanExporter(endpoint=f"{second.http_url}/v1/traces", timeout=30), turns[2], acknowledged)
    assert len(acknowledged) == 3 * CONVERSATIONS
    try:
        wait_until(all_held(first, second), 60, "every conversation graded with its three turns")
    finally:
        report(first, second)
    assert second.stop() == 0


def workers_of_dead(server: ServeProcess) -> list[int]:
    """The service's grading workers still running after it was killed (found by their command line)."""
    mine = f"{server.workdir}/otelgrade.yaml"
    running = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                line = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"otelgrade.workers.worker" in line and mine.encode() in line:
                running.append(int(proc.name))
    return running
