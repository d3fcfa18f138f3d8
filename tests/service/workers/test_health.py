"""A grading worker that stops answering (stopped with SIGSTOP, as a swap storm or a stuck call would hold it),
against a real `otelgrade serve` with two workers: it is noticed within `server.worker_timeout`, the requests for
its traces get 503 / UNAVAILABLE with retry advice at once, the other worker's senders are served, `/metrics`
answers and says which worker is down, a sender that gave up returns what it held of the receive allowance, and
the worker is killed and started again past `server.worker_restart_after` (its spool replays what it held)."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import os
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from prometheus_client import CollectorRegistry

from otelgrade.core.settings import WORKERS_ENV
from otelgrade.intake.shard import owner
from otelgrade.service.workers import worker
from otelgrade.service.workers.health import Heartbeat, WorkerWatch, refusal
from tests.conftest import ServeProcess
from tests.intake.test_spool_durability import wait_until
from tests.receivers_harness import sid, span_pb, traces_request

Serve = Callable[..., ServeProcess]
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
PROTOBUF = "application/x-protobuf"
MIB = 1024 * 1024


@pytest.fixture(autouse=True)
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests choose their number of workers whatever the session's OTELGRADE_WORKERS."""
    monkeypatch.delenv(WORKERS_ENV, raising=False)


def worker_pids(server: ServeProcess) -> dict[int, int]:
    """Each running grading worker's pid by its index (read from its command line: `python -m <the worker module>
    CONFIG INDEX COUNT`)."""
    pid = server.process.pid
    pids = {}
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        try:
            with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                args = cmdline.read().rstrip(b"\0").split(b"\0")
        except FileNotFoundError:  # exited meanwhile
            continue
        if worker.__name__.encode() in args:
            pids[int(args[-2])] = int(child)
    return pids


def runs_of(worker: int, count: int, start: int = 0) -> list[tuple[str, bytes]]:
    """`count` agent runs whose traces worker `worker` of two owns: (trace id, one export request)."""
    runs: list[tuple[str, bytes]] = []
    n = start
    while len(runs) < count:
        n += 1
        trace = n.to_bytes(16, "big")
        if owner(trace, 2) == worker:
            root = span_pb(sid(1), trace_id=trace, name="invoke_agent")
            runs.append((trace.hex(), traces_request([root])))
    return runs


def post(server: ServeProcess, body: bytes, timeout: float = 30, gzipped: bool = False) -> tuple[int, str, float]:
    """(status, Retry-After, seconds it took) of one OTLP/HTTP request."""
    began = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=timeout)
    try:
        headers = {"Content-Type": PROTOBUF, **({"Content-Encoding": "gzip"} if gzipped else {})}
        connection.request("POST", "/v1/traces", body=gzip.compress(body) if gzipped else body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After") or "", time.monotonic() - began
    finally:
        connection.close()


def grpc_export(server: ServeProcess, body: bytes) -> tuple[str, Any]:
    """(status code name, the RetryInfo sent back or None) of one raw OTLP/gRPC call."""
    with grpc.insecure_channel(server.grpc_address) as channel:
        try:
            channel.unary_unary(EXPORT)(body, timeout=30)
        except grpc.RpcError as error:
            advice = dict(error.trailing_metadata() or ()).get("google.rpc.retryinfo-bin")
            retry = error_details_pb2.RetryInfo.FromString(advice) if advice else None
            return str(error.code().name), retry
    return "OK", None


def readyz(server: ServeProcess) -> int:
    try:
        with urllib.request.urlopen(f"{server.metrics_url}/readyz", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.fixture
def stopped() -> Iterator[list[int]]:
    """Pids the test stopped with SIGSTOP: let go again at teardown (if they still run), so the service stops."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def test_a_stopped_worker_refuses_only_its_traces_and_is_restarted(
    serve: Serve, tmp_path: Path, stopped: list[int]
) -> None:
    config = {
        "server": {"workers": 2, "worker_timeout": "1s", "worker_restart_after": "8s"},
        "durability": {"spool_dir": str(tmp_path / "spool")},
        "assembly": {"settle": "3s"},
    }
    server = serve(config)
    (held_trace, held), *mine = runs_of(1, 3)
    theirs = runs_of(0, 20)
    assert post(server, held)[0] == 200  # acknowledged, settling in worker 1 when it stops
    frozen = worker_pids(server)[1]
    os.kill(frozen, signal.SIGSTOP)
    stopped.append(frozen)
    began = time.monotonic()

    first = post(server, mine[0][1])  # sent before anything noticed: answered within the deadline of the call
    wait_until(lambda: readyz(server) == 503, 10, "/readyz says 503")
    noticed = time.monotonic() - began
    later = post(server, mine[1][1])
    code, retry = grpc_export(server, mine[1][1])
    served = [post(server, body) for _, body in theirs[:10]]
    served_grpc = [grpc_export(server, body)[0] for _, body in theirs[10:]]
    scrape_began = time.monotonic()
    up = {w: server.metric("otelgrade_worker_up", {"worker": w}) for w in ("0", "1")}
    scrape = time.monotonic() - scrape_began
    print(
        f"first request for the stopped worker: {first[0]} after {first[2]:.2f}s; /readyz 503 after {noticed:.2f}s; "
        f"later ones: {later[0]} (Retry-After {later[1]}) after {later[2] * 1000:.0f} ms, gRPC {code}; "
        f"the live worker's: {sorted({s for s, _, _ in served})} HTTP (slowest {max(t for *_, t in served):.2f}s), "
        f"{sorted(set(served_grpc))} gRPC; 3 scrapes of /metrics {scrape:.2f}s, worker_up {up}"
    )
    assert first[0] == 503 and first[1] == "2" and first[2] < 5  # the call's deadline is 1 s
    assert noticed < 5
    assert later[0] == 503 and later[1] == "2" and later[2] < 1  # refused without waiting for the worker
    assert code == "UNAVAILABLE" and retry is not None and retry.retry_delay.seconds == 2
    assert {s for s, _, _ in served} == {200} and set(served_grpc) == {"OK"}
    assert up == {"0": 1.0, "1": 0.0} and scrape < 3  # the stopped worker is not waited for (5 s a scrape before)

    wait_until(lambda: worker_pids(server).get(1, frozen) != frozen, 30, "the stopped worker killed and started again")
    wait_until(lambda: readyz(server) == 200, 30, "/readyz says 200 again")
    assert "grading worker 1 has not answered for" in server.log() and "killed, to be started again" in server.log()
    assert server.metric("otelgrade_worker_restarts_total", {"worker": "1", "reason": "stuck"}) == 1
    assert post(server, mine[1][1])[0] == 200  # its senders' retries are kept again
    wait_until(lambda: held_trace in {g["trace_id"] for g in server.grades()}, 30, "the run it held graded")
    assert server.stop() == 0


def abandon(server: ServeProcess, body: bytes) -> None:
    """Send a gzip request and go away before the answer (as an exporter whose own timeout fires)."""
    sender = socket.create_connection(("127.0.0.1", server.http_port))
    compressed = gzip.compress(body)
    head = f"POST /v1/traces HTTP/1.1\r\nHost: otelgrade\r\nContent-Type: {PROTOBUF}\r\nContent-Encoding: gzip\r\n"
    sender.sendall(f"{head}Content-Length: {len(compressed)}\r\n\r\n".encode() + compressed)
    sender.settimeout(0.5)
    with pytest.raises(TimeoutError):
        sender.recv(1)  # no answer yet: the worker is stopped
    sender.close()


def test_requests_abandoned_while_a_worker_is_stopped_give_back_the_receive_allowance(
    serve: Serve, stopped: list[int]
) -> None:
    # A worker_timeout long enough that only the senders' going away can give the allowance back in time.
    limits = {"max_bytes_receiving": "64MiB"}
    server = serve({"server": {"workers": 2, "worker_timeout": "60s"}, "limits": limits})
    mine, theirs = runs_of(1, 3), runs_of(0, 1)
    frozen = worker_pids(server)[1]
    os.kill(frozen, signal.SIGSTOP)
    stopped.append(frozen)
    for _, body in mine:
        abandon(server, body)  # each gzip request holds 20 MiB (what it may inflate to) while it is kept
    began = time.monotonic()
    status = post(server, theirs[0][1], timeout=10, gzipped=True)[0]
    took = time.monotonic() - began
    scrape_began = time.monotonic()
    receiving = server.metric("otelgrade_bytes_receiving")  # the stopped worker's metrics waited for 2 s at most
    scrape = time.monotonic() - scrape_began
    print(
        f"after 3 abandoned gzip requests: {receiving / MIB:.0f} MiB receiving; the live worker's sender: {status} "
        f"after {took:.2f}s; /metrics {scrape:.2f}s"
    )
    assert status == 200 and receiving < MIB and took < 5 and scrape < 4
    os.kill(frozen, signal.SIGCONT)
    assert server.stop() == 0


@pytest.mark.parametrize("workers", [1, 2])
def test_ready_means_every_port_accepts_and_every_worker_answers(serve: Serve, workers: int) -> None:
    server = serve({"server": {"workers": workers}}, ready=False)
    deadline = time.monotonic() + 60
    while readyz_now(server) != 200:
        assert time.monotonic() < deadline and server.process.poll() is None, server.log()
        time.sleep(0.005)
    for port in (server.http_port, server.grpc_port):  # the moment /readyz first says ready
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    (_, body), *_ = runs_of(0, 1)
    assert post(server, body, timeout=10)[0] == 200 and grpc_export(server, body)[0] == "OK"
    assert server.stop() == 0


def readyz_now(server: ServeProcess) -> int:
    """/readyz's status, 0 while nothing listens on the metrics port yet."""
    try:
        return readyz(server)
    except OSError:
        return 0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Silent:
    """A worker as the watch sees it, whose answers the test gives."""

    def __init__(self, clock: Clock) -> None:
        self.index, self.heartbeat = 1, Heartbeat(clock)
        self.stopped_for: str | None = None
        self.alive = self.started = True
        self.pings = self.kills = 0

    def ping(self) -> None:
        self.pings += 1

    def kill(self) -> None:
        self.kills += 1


def test_the_watch_refuses_a_silent_worker_after_its_timeout_and_kills_it_once() -> None:
    clock, registry = Clock(), CollectorRegistry()
    silent = Silent(clock)
    watch = WorkerWatch([silent], timeout=1.0, restart_after=5.0, registry=registry)
    watch.check(silent)
    assert silent.pings == 1 and refusal(silent, 1.0) is None
    clock.now = 0.9
    watch.check(silent)  # still waiting for the first ping's answer: no second ping
    assert silent.pings == 1 and watch.answering(silent)
    clock.now = 1.1
    watch.check(silent)
    assert "has not answered for 1.1s" in (refusal(silent, 1.0) or "")
    assert registry.get_sample_value("otelgrade_worker_up", {"worker": "1"}) == 0
    silent.heartbeat.answered()  # it answers again
    watch.check(silent)
    assert watch.answering(silent) and registry.get_sample_value("otelgrade_worker_up", {"worker": "1"}) == 1
    clock.now = 2.0
    watch.check(silent)  # pinged at 1.1 and never answers again
    for clock.now in (6.0, 7.0, 8.0):
        watch.check(silent)
    assert silent.kills == 1 and silent.stopped_for == "stuck"
    assert watch.restarted(silent) == "stuck" and silent.stopped_for is None
    labels = {"worker": "1", "reason": "stuck"}
    assert registry.get_sample_value("otelgrade_worker_restarts_total", labels) == 1
