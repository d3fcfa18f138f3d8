"""`otelgrade serve` with two grading workers, as a user runs it: the SDK's exporters send to the one service,
every run is graded once, /metrics and the grades page show every worker's runs, and a worker that dies is
started again and grades what its spool held."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

from otelgrade.core.settings import WORKERS_ENV
from otelgrade.intake.shard import owner
from tests.conftest import ServeProcess
from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import GRADED, SUITE, TURNS, conversation_grades, sdk
from tests.intake.test_spool_durability import make_runs, send, wait_until

Serve = Callable[..., ServeProcess]
TWO = {"server": {"workers": 2}}


@pytest.fixture(autouse=True)
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about two workers whatever the session's OTELGRADE_WORKERS (which overrides the config)."""
    monkeypatch.delenv(WORKERS_ENV, raising=False)


def workers_of(server: ServeProcess) -> list[int]:
    """The pids of the service's grading workers (its child processes)."""
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children]


def page(server: ServeProcess, path: str) -> str:
    with urllib.request.urlopen(f"{server.metrics_url}{path}", timeout=10) as response:
        return str(response.read().decode())


def test_two_workers_grade_every_run_once_and_report_as_one_service(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    server = serve({**TWO, "durability": {"spool_dir": str(spool)}})
    assert len(workers_of(server)) == 2
    http = HttpSpanExporter(endpoint=f"{server.http_url}/v1/traces", timeout=5)
    grpc = GrpcSpanExporter(endpoint=server.grpc_address, insecure=True, timeout=5)
    acknowledged: list[str] = []
    send(http, make_runs(30), acknowledged)
    send(grpc, make_runs(30), acknowledged)
    assert len(acknowledged) == 60
    wait_until(lambda: len(server.grades()) == 60, 20, "60 runs graded")
    assert collections.Counter(g["trace_id"] for g in server.grades()) == collections.Counter(acknowledged)
    assert server.metric("otelgrade_runs_graded_total") == 60
    assert server.metric("otelgrade_spans_received_total", {"protocol": "http"}) == 60
    assert server.metric("otelgrade_spans_received_total", {"protocol": "grpc"}) == 60
    assert server.metric("otelgrade_grades_total", {"outcome": "pass"}) == 60
    # Both workers graded some: each marked the traces it owns in its own spool.
    assert (spool / "graded.log").stat().st_size and (spool / "worker-1" / "graded.log").stat().st_size
    shown = json.loads(page(server, "/api/grades?limit=100"))
    assert {g["trace_id"] for g in shown["grades"]} == set(acknowledged)
    run_page = page(server, f"/runs/{acknowledged[0]}")  # read from what its worker sent once it is opened
    assert acknowledged[0] in run_page and "lookup" in run_page  # the run's tool call
    assert server.stop() == 0


def test_a_worker_killed_is_started_again_and_grades_what_its_spool_held(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    server = serve({**TWO, "durability": {"spool_dir": str(spool)}, "assembly": {"settle": "3s"}})
    http = HttpSpanExporter(endpoint=f"{server.http_url}/v1/traces", timeout=5)
    acknowledged: list[str] = []
    send(http, make_runs(40), acknowledged)  # waiting to settle in both workers
    killed = workers_of(server)[1]
    os.kill(killed, signal.SIGKILL)
    wait_until(lambda: len(workers_of(server)) == 2 and killed not in workers_of(server), 20, "worker restarted")
    assert "grading worker 1 exited with -9; starting it again" in server.log()
    wait_until(lambda: len(server.grades()) >= 40, 30, "every acknowledged run graded")
    time.sleep(0.5)
    assert collections.Counter(g["trace_id"] for g in server.grades()) == collections.Counter(acknowledged)
    assert server.stop() == 0


def test_the_environment_chooses_the_number_of_workers(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKERS_ENV, "1")
    single = serve(TWO)
    monkeypatch.undo()
    assert workers_of(single) == []
    assert single.stop() == 0
    config = tmp_path / "otelgrade.yaml"
    config.write_text("suites: []\n")
    env = {**os.environ, WORKERS_ENV: "two"}
    done = subprocess.run(
        [sys.executable, "-m", "otelgrade", "serve", "--config", str(config)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert f"{WORKERS_ENV}='two': write a whole number of workers from 1 to 256, or auto" in done.stderr


def turns_in_both_workers(tracer: Any, conversation_id: str, at_least: int) -> list[int]:
    """Turns of one conversation, at least `at_least` and until both workers got some (each turn is a trace of its
    own): their trace ids."""
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": conversation_id}
    sent: list[int] = []
    while len(sent) < at_least or len({owner(t.to_bytes(16, "big"), 2) for t in sent}) < 2:
        n = len(sent)
        sent.append(turn(tracer, history, f"Where is order {n}?", f"Order {n} shipped.", ["lookup_order"], ids))
    return sent


def test_the_turns_of_a_conversation_meet_in_the_worker_that_owns_it(serve: Serve) -> None:
    """Each turn is a trace of its own, so the turns of one conversation reach different workers; they are graded
    together, as one conversation, once."""
    server = serve({**TWO, "conversations": {"settle": "1s"}, "suites": [SUITE, TURNS]})
    provider, tracer = sdk(server)
    sent = turns_in_both_workers(tracer, "conv-w", 3)
    provider.shutdown()
    server.wait_for_metric("otelgrade_conversations_graded_total", GRADED, 1)
    assert server.metric("otelgrade_runs_graded_total", {"suite": "turns"}) == len(sent)
    assert server.stop() == 0
    # Every turn is one conversation: `short` (at most 2 turns) fails, graded on the last turn's span.
    assert conversation_grades(server) == [
        ("safe", "pass", 1, f"{sent[-1]:032x}"),
        ("short", "fail", 1, f"{sent[-1]:032x}"),
    ]


def test_requests_spooled_by_workers_that_no_longer_run_are_graded_by_worker_0(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = tmp_path / "spool"
    monkeypatch.setenv(WORKERS_ENV, "3")
    first = serve({"durability": {"spool_dir": str(spool)}, "assembly": {"settle": "60s", "idle_timeout": "120s"}})
    http = HttpSpanExporter(endpoint=f"{first.http_url}/v1/traces", timeout=5)
    acknowledged: list[str] = []
    send(http, make_runs(30), acknowledged)  # held by all three workers, settling for a minute
    first.kill()
    held = {w for w in (1, 2) if list((spool / f"worker-{w}").glob("segment-*.spool"))}
    assert held == {1, 2}, "each worker spooled the runs it owns"
    monkeypatch.setenv(WORKERS_ENV, "2")  # fewer workers now: worker 2's spool is worker 0's to replay
    second = serve({"durability": {"spool_dir": str(spool)}})
    wait_until(lambda: len(second.grades()) >= 30, 30, "every acknowledged run graded")
    assert collections.Counter(g["trace_id"] for g in second.grades()) == collections.Counter(acknowledged)
    assert not (spool / "worker-2").exists()
    assert f"spool {spool / 'worker-2'}: 1 segment(s) of a grading worker that does not run now" in second.log()
    assert second.stop() == 0


def test_turns_graded_at_shutdown_reach_the_worker_that_owns_their_conversation(serve: Serve) -> None:
    """At SIGTERM every worker grades the runs it holds, and hands those that are turns to the worker owning their
    conversation: that worker holds them before it finishes the conversation, so it is graded with every turn."""
    held = {"assembly": {"settle": "60s", "idle_timeout": "120s"}, "conversations": {"settle": "60s"}}
    server = serve({**TWO, **held, "suites": [SUITE, TURNS]})
    provider, tracer = sdk(server)
    sent = turns_in_both_workers(tracer, "conv-stop", 4)
    provider.shutdown()
    assert server.metric("otelgrade_runs_graded_total") == 0  # every turn is still held, settling
    assert server.stop() == 0
    short = [g for g in server.grades() if g["level"] == "conversation" and g["grader"] == "short"]
    assert [(g["outcome"], g["rationale"]) for g in short] == [("fail", f"{len(sent)} turn(s), at most 2 allowed")]
