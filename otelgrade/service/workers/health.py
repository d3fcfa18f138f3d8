"""How the receiving process keeps time on its grading workers: a heartbeat to each, whether a worker answers
(requests for its traces, `/readyz` and `/metrics` go by it), and the restart of one that stays silent past
`server.worker_restart_after` (a stopped process, a swap storm, an event loop held by a stuck call).

A worker is sent a ping whenever none is unanswered, every `HEARTBEAT_SECONDS`; its event loop answers at once.
A ping unanswered for `server.worker_timeout` makes the worker late: the requests holding spans of its traces
are refused (503 / UNAVAILABLE, retried by the senders) and the others served as before."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge

log = logging.getLogger("otelgrade")

HEARTBEAT_SECONDS = 0.25  # how often a worker with no ping unanswered is sent one


class Heartbeat:
    """One worker's heartbeat: when the ping still unanswered was sent (None: every ping is answered)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.sent_at: float | None = None

    def due(self) -> bool:
        """Whether a ping should go now (none is unanswered); counts it as sent."""
        if self.sent_at is not None:
            return False
        self.sent_at = self.clock()
        return True

    def answered(self) -> None:
        self.sent_at = None

    def silent_for(self) -> float:
        """Seconds the unanswered ping has waited (0 when none waits)."""
        return 0.0 if self.sent_at is None else max(0.0, self.clock() - self.sent_at)


class Watched(Protocol):
    """What the watch needs of a worker (`front.Worker`)."""

    index: int
    heartbeat: Heartbeat
    stopped_for: str | None

    @property
    def alive(self) -> bool: ...

    @property
    def started(self) -> bool:
        """Running, its spool replayed, taking requests."""
        ...

    def ping(self) -> None: ...

    def kill(self) -> None: ...


def refusal(worker: Watched, timeout: float) -> str | None:
    """Why requests for a worker's traces are refused now (None: they are not)."""
    if not worker.alive or not worker.started:
        return f"grading worker {worker.index} is starting; retry later"
    silent = worker.heartbeat.silent_for()
    if silent > timeout:
        return (
            f"grading worker {worker.index} has not answered for {silent:.1f}s (server.worker_timeout: {timeout:g}s); "
            "retry later"
        )
    return None


class WorkerWatch:
    """Pings every worker, says in the log and in `otelgrade_worker_up{worker}` which do not answer, and kills one
    silent past `restart_after` (its supervisor starts it again: `otelgrade_worker_restarts_total{worker,reason}`)."""

    def __init__(
        self, workers: Sequence[Watched], timeout: float, restart_after: float, registry: CollectorRegistry
    ) -> None:
        self.workers, self.timeout, self.restart_after = workers, timeout, restart_after
        self.up = Gauge(
            "otelgrade_worker_up",
            "1 while the grading worker answers the receiving process (heartbeat, requests, scrapes), else 0",
            ["worker"],
            registry=registry,
        )
        self.restarts = Counter(
            "otelgrade_worker_restarts_total",
            "Grading workers started again, by why: exited (it stopped on its own) or stuck (silent past "
            "server.worker_restart_after, so killed)",
            ["worker", "reason"],
            registry=registry,
        )
        for worker in workers:
            self.up.labels(str(worker.index)).set(0)
            for reason in ("exited", "stuck"):
                self.restarts.labels(str(worker.index), reason)
        self._late: set[int] = set()

    def answering(self, worker: Watched) -> bool:
        return refusal(worker, self.timeout) is None

    async def run(self) -> None:
        """Until cancelled: ping, and act on what the heartbeats say."""
        while True:
            for worker in self.workers:
                self.check(worker)
            await asyncio.sleep(HEARTBEAT_SECONDS)

    def check(self, worker: Watched) -> None:
        """One look at a worker: ping it if due; log when it turns late or answers again; kill it when stuck."""
        if not worker.alive or not worker.started:
            worker.heartbeat.answered()  # a new process: its clock starts when it is ready
            self.up.labels(str(worker.index)).set(0)
            return
        if worker.heartbeat.due():
            worker.ping()
        silent = worker.heartbeat.silent_for()
        late = silent > self.timeout
        self.up.labels(str(worker.index)).set(0 if late else 1)
        if late and worker.index not in self._late:
            self._late.add(worker.index)
            log.warning(
                "grading worker %d has not answered for %.1fs (server.worker_timeout: %gs): requests for its traces "
                "get 503 / UNAVAILABLE until it does; it is restarted after %gs (server.worker_restart_after)",
                worker.index,
                silent,
                self.timeout,
                self.restart_after,
            )
        elif not late and worker.index in self._late:
            self._late.discard(worker.index)
            log.info("grading worker %d answers again", worker.index)
        if silent > self.restart_after and worker.stopped_for is None:
            log.error(
                "grading worker %d has not answered for %.1fs (server.worker_restart_after: %gs): killed, to be "
                "started again (its spool replays what it held)",
                worker.index,
                silent,
                self.restart_after,
            )
            worker.stopped_for = "stuck"
            worker.kill()

    def restarted(self, worker: Watched) -> str:
        """Count a restart of `worker`; its reason (`stuck` when the watch killed it, else `exited`)."""
        reason = worker.stopped_for or "exited"
        worker.stopped_for = None
        self._late.discard(worker.index)
        self.restarts.labels(str(worker.index), reason).inc()
        return reason
