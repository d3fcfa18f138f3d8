"""The receiving process of a `serve` with several grading workers: the OTLP listeners, the metrics endpoint and
the grades page, and the workers' lifecycle.

Each request is split by trace (`shard.split`: the bytes of every span handed on as they arrived, nothing
decoded but the trace id) and each part sent to the worker that owns those traces; the answer adds up the
workers' answers. Senders are asked to back off (503 / UNAVAILABLE) while any worker is, or is restarting. A
worker that exits on its own is started again, and replays its spool. SIGHUP goes on to every worker (each
also reloads when the config file changes); SIGTERM stops the listeners, then each worker shuts down within
`server.shutdown_timeout` as one process would.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import signal
import sys
from collections.abc import Callable

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric

from otelgrade.config import Config, load_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.trajectory import Conversation
from otelgrade.grade.grading import UNMATCHED_KINDS, UnmatchedRuns
from otelgrade.intake.decode import DecodeError, protobuf_request
from otelgrade.intake.ingest import OFFLOAD_BYTES, Receiving
from otelgrade.intake.receivers import (
    Access,
    ExportResult,
    InvalidRequest,
    Overloaded,
    Receiver,
    receiver_types,
)
from otelgrade.intake.receivers.base import Encoding, Signal
from otelgrade.intake.shard import ShardError, owner, split
from otelgrade.service.admin import Admin, receiver_limits
from otelgrade.service.server import STOP_GRACE_SECONDS
from otelgrade.service.workers import frames, handoff
from otelgrade.service.workers.health import Heartbeat, WorkerWatch, refusal
from otelgrade.service.workers.merge import Merged, read_snapshot
from otelgrade.service.workers.runs import ListedRuns

log = logging.getLogger("otelgrade")

RESTART_DELAY_SECONDS = (0.1, 1.0, 5.0)  # before a worker that exited is started again (repeated exits wait longer)
SCRAPE_TIMEOUT_SECONDS = 2.0  # the most /metrics waits for a worker (that answers the heartbeat) to send its metrics
DRAINED_CHECK_SECONDS = 0.02  # at shutdown, how often the receiving process looks whether every worker is drained


class WorkerGone(RuntimeError):
    """The worker exited while a request or scrape was waiting for it."""


class Worker:
    """One grading worker process and the pipe to it."""

    def __init__(self, index: int, count: int, config_path: str | None, front: Front) -> None:
        self.index = index
        self.count = count
        self.config_path = config_path
        self.front = front
        self.proc: asyncio.subprocess.Process | None = None
        self.ready = asyncio.Event()
        self.drained = asyncio.Event()  # shutting down: it graded what it held
        self.busy = False
        self.unmatched: UnmatchedRuns | None = None  # as the worker last told it
        self.restarts = 0
        self.heartbeat = Heartbeat()
        self.stopped_for: str | None = None  # why the receiving process killed it (None: it was not)
        self._waiting: dict[int, asyncio.Future[tuple[int, bytes]]] = {}
        self._ids = itertools.count(1)
        self._reading: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.ready.clear()
        self.drained.clear()
        self.busy = False
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "otelgrade.service.workers.worker",
            self.config_path or "-",
            str(self.index),
            str(self.count),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**31,
        )
        self._reading = asyncio.create_task(self._read(self.proc))

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    @property
    def started(self) -> bool:
        return self.ready.is_set()

    def ping(self) -> None:
        self.tell(frames.frame(frames.PING))

    def kill(self) -> None:
        if self.alive and self.proc is not None:
            self.proc.kill()  # a stopped process too

    async def export(self, signal_: Signal, encoding: Encoding, protocol: str, body: bytes) -> tuple[int, ExportResult]:
        request_id = next(self._ids)
        _, payload = await self._ask(request_id, frames.export_frame(request_id, signal_, encoding, protocol, body))
        _, status, result = frames.read_result(payload)
        return status, result

    async def scrape(self) -> list[Metric]:
        return read_snapshot(await self._request(frames.SCRAPE))

    async def runs_of(self, trace_id: str) -> bytes:
        """The trajectories this worker holds of a trace's runs (`runs.runs_json`)."""
        return await self._request(frames.RUNS_OF, trace_id.encode())

    async def _request(self, kind: int, *parts: bytes) -> bytes:
        """Ask the worker for something it answers at once; the answer's payload past its request id."""
        request_id = next(self._ids)
        _, payload = await self._ask(request_id, frames.frame(kind, frames.ID.pack(request_id), *parts))
        return payload[frames.ID.size :]

    def tell(self, data: bytes) -> None:
        """Send a frame that has no answer (dropped, and counted, when the worker is not running)."""
        proc = self.proc
        if proc is None or proc.stdin is None or not self.alive:
            self.front.metrics.log_records_dropped.labels("worker_down").inc()
            if data[4] != frames.PING:
                log.warning(
                    "grading worker %d is not running: a message to it (kind %d) is dropped", self.index, data[4]
                )
            return
        proc.stdin.write(data)

    async def _ask(self, request_id: int, data: bytes) -> tuple[int, bytes]:
        proc = self.proc
        if proc is None or proc.stdin is None or not self.alive:
            raise WorkerGone(f"grading worker {self.index} is not running")
        answer: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        timeout = self.front.config.server.worker_timeout
        try:
            async with asyncio.timeout(timeout):  # a worker that does not read its pipe holds the drain too
                proc.stdin.write(data)
                await proc.stdin.drain()
                return await answer
        except (ConnectionError, BrokenPipeError) as exc:
            raise WorkerGone(f"grading worker {self.index} is not running") from exc
        except TimeoutError:
            raise WorkerGone(
                f"grading worker {self.index} did not answer within {timeout:g}s (server.worker_timeout)"
            ) from None
        finally:
            self._waiting.pop(request_id, None)

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        async for got in frames.read_frames(proc.stdout):
            for kind, payload in got:
                try:
                    self._take(kind, payload)
                except Exception:  # one frame that does not read must not stop the others (answers among them)
                    log.exception("a frame from grading worker %d could not be read", self.index)
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_exception(WorkerGone(f"grading worker {self.index} exited"))

    def _take(self, kind: int, payload: bytes) -> None:
        """Act on one frame from the worker."""
        if kind in (frames.RESULT, frames.METRICS, frames.RUNS):
            (request_id,) = frames.ID.unpack_from(payload)
            answer = self._waiting.get(request_id)
            if answer is not None and not answer.done():
                answer.set_result((kind, payload))
        elif kind == frames.RUN:  # its trajectory stays in the worker, asked for if its page is opened
            self.front.runs.list_run(*frames.read_run(payload))
        elif kind == frames.CONVERSATION:
            self.front.runs.add_run(Conversation.model_validate_json(payload))
        elif kind == frames.GRADES:
            self.front.runs.write(frames.read_grades(payload))
        elif kind == frames.TURN:
            conversation_id, ids, run = frames.read_turn(payload)
            self.front.hold_turn(conversation_id, (self.index, ids), run)
        elif kind == frames.TURN_HELD:
            self.front.turn_held(self.index, handoff.read_held(payload))
        elif kind == frames.UNMATCHED:
            told = orjson.loads(payload)
            self.unmatched = UnmatchedRuns(
                told["runs"],
                tuple(tuple(k) for k in told["kinds"]),
                told["traces_without_run"],
                tuple(tuple(s) for s in told["suites"]),
            )
        elif kind == frames.PONG:
            self.heartbeat.answered()
        elif kind == frames.BUSY:
            self.busy = payload == b"\1"
        elif kind == frames.DRAINED:
            self.drained.set()
        elif kind == frames.READY:
            self.restarts = 0
            self.ready.set()
            for turn in self.front.relay.waiting(self.index):  # passed on while it was down, or not held before
                self.tell(turn)

    async def wait(self) -> int:
        """The exit code, once the process has exited and everything it sent was read."""
        assert self.proc is not None
        code = await self.proc.wait()
        if self._reading is not None:
            await self._reading
        return code


class Front(Receiving):
    """The receiving process: the receivers' `Ingest`, splitting each request among the workers."""

    def __init__(self, config: Config, config_path: str | None, count: int) -> None:
        self.metrics = Metrics(label_limit=config.metrics.label_limit)
        super().__init__(self.metrics, config.limits.max_bytes_receiving)
        with contextlib.suppress(ValueError):  # platforms without /proc
            ProcessCollector(registry=self.metrics.registry)
        self.config = config
        self.config_path = config_path
        self.max_request_bytes = config.receivers.max_request_bytes
        self.body_read_timeout = config.receivers.body_read_timeout
        self.connection_limits = receiver_limits(config)
        self.runs = ListedRuns(config.ui.keep, lambda: [w for w in self.workers if self.watch.answering(w)])
        self.workers = [Worker(i, count, config_path, self) for i in range(count)]
        self.relay = handoff.Relay(count)  # conversation turns passed to a worker, until it holds them
        server = config.server
        self.watch = WorkerWatch(
            self.workers, server.worker_timeout, server.worker_restart_after, self.metrics.registry
        )
        self.ready = False
        self._stopping = False
        self._stop = asyncio.Event()

    # --- Ingest -------------------------------------------------------------------------------

    def busy(self) -> bool:
        """A worker asks senders to back off (it holds as much as it may). One that is starting or does not answer
        refuses only the requests holding its traces (`export`), whatever it last said."""
        return any(w.busy and self.watch.answering(w) for w in self.workers)

    async def export(self, signal: Signal, body: bytes, encoding: Encoding, protocol: str) -> ExportResult:
        if self.busy():
            raise Overloaded("otelgrade is holding as much as it may; retry later")
        count, left_out = len(self.workers), 0
        warnings: list[str] = []
        try:
            if encoding == "json":  # parsed on a thread: a large JSON body must not hold up the other requests
                body, left_out, warnings = await asyncio.to_thread(protobuf_request, body, encoding, signal)
                encoding = "protobuf"
            parts = (
                split(body, signal, count)
                if len(body) < OFFLOAD_BYTES
                else await asyncio.to_thread(split, body, signal, count)
            )
        except (DecodeError, ShardError):
            parts = {0: body}  # the worker's decode says what is wrong with it
        for index in parts:  # before any part is sent: a request is kept whole or refused whole
            if why := refusal(self.workers[index], self.watch.timeout):
                raise Overloaded(why)
        answers = await asyncio.gather(
            *(self.workers[i].export(signal, encoding, protocol, part) for i, part in parts.items()),
            return_exceptions=True,
        )
        rejected, messages = left_out, list(warnings)
        invalid = []
        for answer in answers:
            if isinstance(answer, WorkerGone):
                raise Overloaded(f"{answer}; retry later")  # parts kept by other workers come again: duplicates
            if isinstance(answer, BaseException):
                raise answer
            status, result = answer
            if status == frames.OVERLOADED:
                raise Overloaded(result.message)
            if status == frames.INVALID:
                invalid.append(result.message)
                continue
            rejected += result.rejected
            messages += [result.message] if result.message and result.message not in messages else []
        if invalid and len(invalid) == len(answers):
            raise InvalidRequest(invalid[0])
        messages += [m for m in dict.fromkeys(invalid)]
        return ExportResult(rejected, "; ".join(messages))

    def hold_turn(self, conversation_id: bytes, key: handoff.TurnKey, run: bytes) -> None:
        """Hand a run that is a turn of a conversation to the worker owning the conversation (a hash of its key),
        kept until that worker holds it: a worker that is down gets it once it is ready again."""
        index = owner(conversation_id, len(self.workers))
        data = handoff.hold_frame(*key, run)
        if dropped := self.relay.keep(index, key, data):
            self.metrics.log_records_dropped.labels("worker_down").inc(dropped)
        worker = self.workers[index]
        if worker.alive and worker.ready.is_set():
            worker.tell(data)

    def turn_held(self, holder: int, key: handoff.TurnKey) -> None:
        """The worker owning a turn's conversation holds it: forget it, and tell the worker that rebuilt it."""
        self.relay.held(holder, key)
        origin, ids = key
        if origin < len(self.workers) and self.workers[origin].alive:  # else its spool replays the turn's trace
            self.workers[origin].tell(handoff.passed_frame(ids))

    def unmatched(self) -> UnmatchedRuns:
        """What arrived and was not graded, in every worker (for the grades page)."""
        told = [w.unmatched for w in self.workers if w.unmatched is not None]
        kinds: collections.Counter[tuple[str, str, str]] = collections.Counter()
        for each in told:
            for service, agent, source, count in each.kinds:
                kinds[(service, agent, source)] += count
        return UnmatchedRuns(
            sum(each.runs for each in told),
            tuple((*kind, count) for kind, count in kinds.most_common(UNMATCHED_KINDS)),
            sum(each.traces_without_run for each in told),
            told[0].suites if told else (),
        )

    # --- lifecycle ----------------------------------------------------------------------------

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        try:
            metrics_runner = await self._start_metrics_endpoint()
            for worker in self.workers:
                await worker.start()
            supervising = [asyncio.create_task(self._supervise(w)) for w in self.workers]
            watching = asyncio.create_task(self.watch.run())
            await self._all_ready()
            receivers = await self._start_receivers()
        except Exception as exc:
            log.error("cannot start: %s", exc)
            self._stopping = True
            await self._stop_workers()
            return 1
        self.ready = True
        log.info("ready with %d grading workers (config: %s)", len(self.workers), self.config.source)
        await self._stop.wait()
        log.info("shutting down: refusing new requests, the workers grade what they hold")
        self.ready = False
        self._stopping = True
        watching.cancel()  # a worker busy finishing is not killed for being slow to answer
        await asyncio.gather(*(r.stop() for r in receivers), return_exceptions=True)
        await self._stop_workers()
        for task in supervising:
            task.cancel()
        if metrics_runner is not None:
            await metrics_runner.cleanup()
        log.info("stopped")
        return 0

    async def _all_ready(self) -> None:
        """Wait until every worker has replayed its spool and takes requests (a worker that fails to start
        raises)."""
        for worker in self.workers:
            while not worker.ready.is_set():
                if not worker.alive and worker.restarts == 0 and worker.proc is not None:
                    raise RuntimeError(f"grading worker {worker.index} exited with {worker.proc.returncode}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(worker.ready.wait(), 0.1)

    async def _supervise(self, worker: Worker) -> None:
        """Start a worker again whenever it exits while the service runs (it replays its spool)."""
        while True:
            code = await worker.wait()
            if self._stopping or not self.ready:
                return
            delay = RESTART_DELAY_SECONDS[min(worker.restarts, len(RESTART_DELAY_SECONDS) - 1)]
            if self.watch.restarted(worker) == "exited":  # a stuck one killed was logged when killed
                log.error("grading worker %d exited with %s; starting it again in %gs", worker.index, code, delay)
            worker.restarts += 1
            worker.ready.clear()
            await asyncio.sleep(delay)
            await worker.start()

    def _on_hup(self) -> None:
        """Every worker reloads; this process takes the new request limits (its listeners change at a restart)."""
        self._forward(signal.SIGHUP)
        if self.config_path is not None:
            task = asyncio.ensure_future(asyncio.to_thread(load_config, self.config_path))
            task.add_done_callback(self._reloaded)

    def _reloaded(self, task: asyncio.Future[Config]) -> None:
        if task.cancelled() or task.exception() is not None:
            return  # the workers log why the file is refused
        config = task.result()
        self.max_request_bytes = config.receivers.max_request_bytes
        self.max_bytes_receiving = config.limits.max_bytes_receiving

    def _forward(self, sig: signal.Signals) -> None:
        for worker in self.workers:
            if worker.alive and worker.proc is not None:
                worker.proc.send_signal(sig)

    async def _stop_workers(self) -> None:
        """SIGTERM each worker; they grade what they hold within `server.shutdown_timeout`; past it and a grace,
        those still running are killed."""
        self._forward(signal.SIGTERM)
        limit = self.config.server.shutdown_timeout + 2 * STOP_GRACE_SECONDS
        running = [w for w in self.workers if w.proc is not None]
        together = asyncio.create_task(self._finish_together(running))
        try:
            await asyncio.wait_for(asyncio.gather(*(w.wait() for w in running)), limit)
        except TimeoutError:
            for w in running:
                if w.alive and w.proc is not None:
                    log.error("grading worker %d did not stop within %gs: killed", w.index, limit)
                    w.proc.kill()
            await asyncio.gather(*(w.wait() for w in running), return_exceptions=True)
        together.cancel()

    async def _finish_together(self, running: list[Worker]) -> None:
        """Once every worker has graded what it held (or exited), tell them all to finish: each has then been handed
        every conversation turn the others routed to it while grading (a worker's turns come up before its word
        that it is done, and go down before the word to finish)."""

        while any(w.alive and not w.drained.is_set() for w in running):
            await asyncio.sleep(DRAINED_CHECK_SECONDS)
        for worker in running:
            if worker.alive:
                worker.tell(frames.frame(frames.FINISH))

    async def _start_receivers(self) -> list[Receiver]:
        started: list[Receiver] = []
        types = receiver_types()
        access = Access.of(self.config.receivers.tls, self.config.receivers.auth)
        for name, address in self.config.receiver_addresses().items():
            receiver = types[name].factory(address, self, access)
            port = await receiver.start()
            started.append(receiver)
            log.info("OTLP/%s listening on %s (port %d)", name, address, port)
        return started

    # --- metrics endpoint and grades page -----------------------------------------------------

    async def _start_metrics_endpoint(self) -> web.AppRunner | None:
        def ready() -> bool:
            return self.ready and all(self.watch.answering(w) for w in self.workers)

        return await ServiceAdmin(self, ready).start()


class ServiceAdmin(Admin):
    """The admin endpoint of the receiving process: its /metrics merges every worker's (scraped on each request)."""

    def __init__(self, front: Front, ready: Callable[[], bool]) -> None:
        super().__init__(front.config, front.metrics, front.runs, front.unmatched, ready)
        self.front = front

    async def _metrics_page(self, request: web.Request) -> web.Response:
        watch = self.front.watch
        workers = [w for w in self.front.workers if watch.answering(w)]  # none is waited for past its deadline
        scraped = await asyncio.gather(
            *(asyncio.wait_for(w.scrape(), SCRAPE_TIMEOUT_SECONDS) for w in workers), return_exceptions=True
        )
        for worker, families in zip(workers, scraped, strict=True):
            if not isinstance(families, list):
                watch.up.labels(str(worker.index)).set(0)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(Merged([self.metrics.registry.collect(), *(t for t in scraped if isinstance(t, list))]))
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        body: bytes = encoder(registry)
        return web.Response(body=body, headers={"Content-Type": content_type})


def serve(config: Config, config_path: str | None, count: int) -> int:
    """Run the receiving process and `count` grading workers until SIGTERM/SIGINT."""
    return asyncio.run(Front(config, config_path, count).serve())
