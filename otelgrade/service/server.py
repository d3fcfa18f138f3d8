"""`otelgrade serve`: the process lifecycle. The OTLP receivers, the assembler, the grading thread (grading
through the config's `Pipeline`) and the admin endpoint (`admin`) on one asyncio loop; hot reload (`reload`) on
SIGHUP or a changed config file; back-pressure (`backpressure`) instead of dropping; graceful shutdown.

Ingest never waits for grading: completed traces go to a single grading thread. The assembler never refuses
input: when `assembly.max_traces` traces are held it closes the oldest early (reason `evicted`) and that trace is
graded like any other.
With `durability.spool_dir`, accepted requests are spooled before they are acknowledged and
replayed at start-up (on a thread: the probes answer meanwhile), and graded runs are marked in the spool once every
sink has written their grades (runs whose grades a sink holds to retry wait in the spool). A sink that can read back
what it holds (JSONL) does not write again the grades of runs graded just before a crash.
Shutdown is bounded by `server.shutdown_timeout`, however much is held: held runs are code-graded until it
is spent, judges get what is left of it, and the runs not graded by then are counted in the log (with a spool
they stay in it and are graded at the next start).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from prometheus_client import ProcessCollector

from otelgrade.config import Config, load_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.export.sinks import RecallingSink, RetryingSink
from otelgrade.export.ui import RunLog, RunStore
from otelgrade.export.ui.runlog import printable
from otelgrade.grade.conversations import Journal
from otelgrade.grade.judges.runner import JudgeRunner
from otelgrade.grade.turn_records import TurnRouter
from otelgrade.intake.assemble import Assembler, CompletedTrace
from otelgrade.intake.backpressure import Backpressure, release_memory
from otelgrade.intake.ingest import Ingest
from otelgrade.intake.receivers import Access, Receiver, receiver_types
from otelgrade.intake.spool import Spool
from otelgrade.pipeline import Pipeline
from otelgrade.service.admin import Admin, pages_url, receiver_limits
from otelgrade.service.alarm import Alarm
from otelgrade.service.reload import Reloader

log = logging.getLogger("otelgrade")

# The longest the loop's periodic work waits (memory, reload checks, the runs log, a worker's look at what it did
# not grade): a trace that completes, a conversation that settles or a judged run due to be handed on wakes it
# when due (`Alarm`), so the loop sleeps between them. At 50 ms, an idle process used about 20 ms of CPU a second.
TICK_SECONDS = 0.5
MIN_TICK_SECONDS = 0.005  # the shortest: traces that complete within it are collected together
UNMATCHED_REPORT_SECONDS = 60.0  # how often the runs no suite matched are described in the log
MARK_EVERY_SECONDS = 0.02  # with a spool: the most grading time between marks of graded runs
MARK_RETRY_SECONDS = 1.0  # how often runs whose grades a sink holds to retry are checked, to be marked
STOP_GRACE_SECONDS = 5.0  # how long calls in progress may finish once shutdown begins
KEPT_SHARE = 0.25  # of `limits.max_bytes_held`: the most graded traces kept for late spans (`regrade`) may hold


def run(config_path: str | None) -> int:
    """Serve until SIGTERM/SIGINT; 0 after a clean shutdown, 2 for a bad config, 1 if it cannot start."""
    _setup_logging()
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(f"otelgrade: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(Server(config, config_path).serve())


def _regrades(config: Config) -> bool:
    """Whether a suite grades runs again on late spans (so closed traces are kept for them)."""
    return any(suite.regrade for suite in config.suites)


# Client libraries that log every request at INFO (one line per judge call): quiet unless asked for with DEBUG.
_CHATTY = ("httpx", "httpx2", "httpcore", "openai")


def _setup_logging() -> None:
    if not logging.getLogger().handlers:
        level = os.environ.get("OTELGRADE_LOG_LEVEL", "INFO").upper()
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        if level != "DEBUG":
            for name in _CHATTY:
                logging.getLogger(name).setLevel(logging.WARNING)


class Server:
    def __init__(
        self,
        config: Config,
        config_path: str | None,
        clock: Callable[[], float] = time.monotonic,
        runs: RunStore | None = None,
    ) -> None:
        self.config = config
        self.config_path = config_path
        self.extra_receivers: list[Callable[[Ingest], Receiver]] = []  # started beside the configured ones
        # Called with the time at each of the loop's ticks (every `TICK_SECONDS` at most): periodic work of its own
        # (a grading worker's look at what it did not grade) without a timer of its own, each of which wakes the loop.
        self.on_tick: list[Callable[[float], None]] = []
        # Called on the loop when what is held or queued for grading changed (traces closed, or graded): whether
        # senders should back off may have changed (a grading worker tells the receiving process at once).
        self.on_pressure: list[Callable[[], None]] = []
        self._alarm: Alarm | None = None  # set while the loop's periodic work runs (`_tick`)
        # Awaited at shutdown once what was held is graded, before open conversations are finished or kept (grading
        # workers: until the turns the others route here have come), with the shutdown deadline.
        self.before_finishing: Callable[[float], Awaitable[None]] | None = None
        self.clock = clock
        self.metrics = Metrics(label_limit=config.metrics.label_limit)
        with contextlib.suppress(ValueError):  # platforms without /proc
            ProcessCollector(registry=self.metrics.registry)
        self.assembler = Assembler(config.assembly, self.metrics, keep_closed=_regrades(config))
        self.assembler.max_kept_bytes = config.limits.max_bytes_held * KEPT_SHARE
        self.ready = False
        self._stop = asyncio.Event()
        self._grading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otelgrade-grade")
        self._decoding = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otelgrade-decode")
        self.pressure = Backpressure(self.assembler, self.metrics, config.assembly, config.limits)
        self._grade_until: float | None = None  # set at shutdown: traces the grading thread reaches later wait
        self._ungraded = 0  # traces not graded at shutdown for want of time (written by the grading thread)
        self.spool: Spool | None = None  # opened in serve(), with `durability.spool_dir`
        self.ingest = Ingest(
            self.assembler,
            self.metrics,
            config.receivers.max_request_bytes,
            clock,
            decode_executor=self._decoding,
            busy=self.pressure.overloaded,
            max_bytes_receiving=config.limits.max_bytes_receiving,
            body_read_timeout=config.receivers.body_read_timeout,
        )
        self.ingest.connection_limits = receiver_limits(config)
        self._pending: set[asyncio.Future[Any]] = set()
        self.reloader = Reloader(config_path, self.metrics, clock)
        self.runs = runs if runs is not None else RunStore(config.ui.keep)  # the grades page's runs
        self.run_log = RunLog(config.ui, clock)
        self.pipeline = Pipeline(
            config,
            self.metrics,
            views=[self.runs, self.run_log],
            on_run=self.runs.add_run,
            pages_url=pages_url(config),
            clock=clock,
        )
        self.exporter = self.pipeline.exporter
        self._retrying_sinks = [sink for sink in self.pipeline.sinks if isinstance(sink, RetryingSink)]
        self._unwritten_runs: set[str] = set()  # graded, not marked: a sink holds some of their grades to retry
        # what else keeps graded traces unmarked (their conversation turns, passed to another worker, not yet held)
        self.marks_wait: list[Callable[[], set[str]]] = []
        self._judges: JudgeRunner | None = None  # started on the loop, in serve()
        self.turn_router: TurnRouter | None = None  # with replicas, each turn goes to the conversation router
        if config.conversations.route_turns:
            secret = config.conversations.turn_secret()
            self.turn_router = TurnRouter(config.conversations.route_turns, self.metrics, secret)
            self.pipeline.grading.turn_router = self.turn_router
            self.pipeline.grading.turn_secret = secret
        self.ingest.on_turns = self._turns_received

    # --- lifecycle ---------------------------------------------------------------------------

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_stop_signal, sig)
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        try:
            await self._start_grading()
            unmatched = self.pipeline.grading.unmatched_runs
            metrics_runner = await Admin(self.config, self.metrics, self.runs, unmatched, lambda: self.ready).start()
            _tune_gc()  # before replay: the runs it holds again are not the process's for good
            await asyncio.to_thread(self._replay)  # the probes answer meanwhile; /readyz says not ready
            receivers = await self._start_receivers()
        except Exception as exc:
            log.error("cannot start: %s", exc)
            await self._close_grading()
            return 1
        self.ready = True
        log.info("ready (config: %s)", self.config.source)
        ticker = asyncio.create_task(self._tick())
        await self._stop.wait()

        log.info("shutting down: refusing new requests, grading %d in-flight traces", self.assembler.traces_in_flight)
        deadline = self._grade_until = self.clock() + self.config.server.shutdown_timeout
        self.ready = False
        await asyncio.gather(*(r.stop() for r in receivers), return_exceptions=True)
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
        self._grade(self.assembler.drain())
        await self._close_grading(deadline)
        self._report_ungraded()
        if metrics_runner is not None:
            await metrics_runner.cleanup()
        log.info("stopped")
        return 0

    def _report_ungraded(self) -> None:
        if not self._ungraded:
            return
        kept = (
            "they stay in the spool and are graded at the next start"
            if self.spool is not None
            else "they are lost: with durability.spool_dir they would be graded at the next start"
        )
        log.warning(
            "shutdown: %d trace(s) not graded within server.shutdown_timeout (%gs); %s",
            self._ungraded,
            self.config.server.shutdown_timeout,
            kept,
        )

    def _on_stop_signal(self, sig: signal.Signals) -> None:
        if self._stop.is_set():
            return
        log.info("received %s", sig.name)
        self._stop.set()

    def _on_hup(self) -> None:
        self._spawn_reload("SIGHUP")

    def _spawn_reload(self, why: str) -> None:
        """Reload beside the tick loop, so completed traces keep flowing while the suites are rebuilt."""
        task = asyncio.ensure_future(self.reload(why))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _start_grading(self) -> None:
        """Start the judge runner and rebuild the suites with it as their judges' client."""
        try:
            self._judges = await self.pipeline.start_judges()
        except Exception as exc:
            log.error("judge graders are disabled: the judge runner did not start: %s", exc)

    async def _close_grading(self, deadline: float | None = None) -> None:
        """Wait for every queued trace to be code-graded, then for judges until `deadline` (their runs still
        unanswered then are graded `error`, reason `shutdown`), then close the sinks and the spool."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self.before_finishing is not None and deadline is not None:
            await self.before_finishing(deadline)
        if self.turn_router is not None:  # what is queued for the router, before the grading thread stops
            await asyncio.get_running_loop().run_in_executor(None, self.turn_router.close)
        if self.spool is None and self.pipeline.open_conversations():  # else the spool keeps them for the next start
            await asyncio.get_running_loop().run_in_executor(self._grading, self.pipeline.finish_conversations)
        if self._judges is not None:
            left = None if deadline is None else max(0.0, deadline - self.clock())
            if left is not None and self._judges.outstanding:
                log.info("waiting up to %.1fs for %d judge answer(s)", left, self._judges.outstanding)
            try:
                await self._judges.close(drain=True, timeout=left)
            except Exception:
                log.exception("closing the judge runner failed")
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._grading, self.pipeline.tick, math.inf)  # runs whose judges did not answer
            if deadline is None:
                await loop.run_in_executor(self._grading, self.exporter.flush)
                await loop.run_in_executor(self._grading, self.exporter.close)
            else:
                await loop.run_in_executor(self._grading, self.exporter.finish, max(0.0, deadline - self.clock()))
        except Exception:
            log.exception("closing the sinks failed")
        self._grading.shutdown(wait=True)
        self._decoding.shutdown(wait=True)
        if self.spool is not None:
            self.spool.close()
        if self.pipeline.grading.conversations.journal is not None:
            self.pipeline.grading.conversations.journal.close()

    def _turns_received(self, bodies: list[tuple[str, str]]) -> None:
        """Turn records the conversation router sent this replica: held on the grading thread."""
        try:
            self._grading.submit(self.pipeline.grading.hold_routed, bodies).add_done_callback(self._woken)
        except RuntimeError:  # the grading thread has stopped: shutting down
            self.metrics.log_records_dropped.labels("shutdown").inc(len(bodies))

    def hold_passed_on(self, body: bytes, then: Callable[[], None]) -> None:
        """A turn another grading worker passed on to this one: held on the grading thread, then `then()` (which
        says so: the conversation journal has it)."""

        def hold() -> None:
            self.pipeline.grading.hold_passed_on(body)
            self._woken()
            then()

        try:
            self._grading.submit(hold)
        except RuntimeError:  # the grading thread has stopped: shutting down (the turn is passed on again later)
            log.warning("shutdown: a conversation turn passed to this worker is not held; its trace is replayed")

    def _replay(self) -> None:
        """Before the receivers open, on a thread of its own: open the spool and hold again what it kept of runs not
        yet graded."""
        durability = self.config.durability
        if not durability.spool_dir:
            return
        spool = Spool(durability.spool_dir, durability.fsync, durability.segment_bytes, metrics=self.metrics)
        self.spool = self.ingest.spool = spool
        journal = Journal(durability.spool_dir, fsync=durability.fsync != "never")
        if held_again := self.pipeline.grading.conversations.restore(journal):  # before any run is graded
            log.info("spool: %d conversation(s) held again", held_again)
        graded = spool.graded_ids()
        self.assembler.remember(graded)  # the decision cache, as it was
        skip = set(graded)
        requests = 0
        held: set[str] = set()
        for segment, record in spool.replay():
            kept = self.ingest.replay(record, skip)
            spool.hold(segment, kept)
            held |= kept
            requests += 1
        spool.replayed()
        if requests:
            log.info("spool: replayed %d request(s); %d trace(s) held again", requests, self.assembler.traces_in_flight)
        for sink in self.exporter.sinks:
            if held and isinstance(sink, RecallingSink) and (count := sink.skip_held(held)):
                log.info("%s holds %d grade(s) of runs held again: not written twice", type(sink).__name__, count)

    async def _start_receivers(self) -> list[Receiver]:
        started: list[Receiver] = []
        types = receiver_types()
        access = Access.of(self.config.receivers.tls, self.config.receivers.auth)
        for name, address in self.config.receiver_addresses().items():
            receiver = types[name].factory(address, self.ingest, access)
            port = await receiver.start()
            started.append(receiver)
            tls = "TLS" if access.tls else "plaintext"
            log.info("OTLP/%s listening on %s (port %d, %s)", name, address, port, tls)
        for make in self.extra_receivers:
            receiver = make(self.ingest)
            await receiver.start()
            started.append(receiver)
        return started

    # --- the loop's periodic work ------------------------------------------------------------

    async def _tick(self) -> None:
        """The loop's periodic work. What is due at a time of its own (a trace may complete, a conversation settle, a
        judged run be handed on) is done when the alarm rings for it: each source tells the alarm its deadline as it
        learns it. The rest (memory, reload checks, the runs log, `on_tick`) every `TICK_SECONDS`."""
        loop = asyncio.get_running_loop()
        alarm = self._alarm = Alarm(loop, self.clock, MIN_TICK_SECONDS)
        self.assembler.on_deadline = alarm.at
        next_tick = self.clock() + TICK_SECONDS
        next_mark_retry = self.clock()
        next_unmatched_report = self.clock() + UNMATCHED_REPORT_SECONDS
        settling: asyncio.Future[None] | None = None
        try:
            while True:
                alarm.at(self._next_due())
                await alarm.wait(next_tick - self.clock())
                now = self.clock()
                self._grade(self.assembler.poll(now))
                settles = self.pipeline.next_deadline()
                # one settling call queued at a time: each takes a bounded batch, runs queued meanwhile go first
                if settles is not None and settles <= now and (settling is None or settling.done()):
                    settling = loop.run_in_executor(self._grading, self.pipeline.settle)
                    self._pending.add(settling)
                    settling.add_done_callback(self._pending.discard)
                    settling.add_done_callback(self._woken)
                self.pipeline.tick()
                if now < next_tick:
                    continue
                next_tick = now + TICK_SECONDS
                if self._unwritten_runs and now >= next_mark_retry:
                    next_mark_retry = now + MARK_RETRY_SECONDS
                    loop.run_in_executor(self._grading, self._mark_graded, [])
                self.run_log.tick()
                if now >= next_unmatched_report:
                    next_unmatched_report = now + UNMATCHED_REPORT_SECONDS
                    if line := self.pipeline.unmatched_report():
                        log.warning("%s", printable(line))
                if self.pressure.watch_memory():
                    loop.run_in_executor(self._grading, release_memory)
                if self.reloader.changed(now):
                    self._spawn_reload("config file changed")
                for hook in self.on_tick:
                    hook(now)
        finally:
            self.assembler.on_deadline = None
            self._alarm = None
            alarm.close()

    def _next_due(self) -> float | None:
        """When the loop next has work: a trace may complete, a conversation settle, a judged run be handed on."""
        due = [d for d in (self.assembler.next_deadline(), self.pipeline.next_due()) if d is not None]
        return min(due, default=None)

    def _woken(self, _: object = None) -> None:
        """After grading work (on any thread): the alarm learns the deadlines it set (conversations held, judged
        runs waiting for their judges)."""
        if (alarm := self._alarm) is not None:
            alarm.at(self.pipeline.next_due())

    def _grade(self, completed: list[CompletedTrace]) -> None:
        """Queue completed traces for the grading thread; the event loop does not wait for it."""
        if completed:
            future = asyncio.get_running_loop().run_in_executor(self._grading, self._grade_batch, completed)
            nbytes = sum(trace.nbytes for trace in completed)
            self.pressure.queued(len(completed), nbytes)
            self._pending.add(future)
            future.add_done_callback(self._pending.discard)
            future.add_done_callback(lambda _: self._graded(len(completed), nbytes))
            self._pressure_changed()
        self.pressure.check()

    def _graded(self, count: int, nbytes: float) -> None:
        """A batch of traces graded (on the loop)."""
        self.pressure.graded(count, nbytes)
        self._woken()
        self._pressure_changed()

    def _pressure_changed(self) -> None:
        for hook in self.on_pressure:
            hook()

    def _grade_batch(self, completed: list[CompletedTrace]) -> None:
        pipeline = self.pipeline
        unmarked: list[str] = []
        marked_at = self.clock()
        for done, trace in enumerate(completed):
            if self._grade_until is not None and self.clock() >= self._grade_until:
                self._ungraded += len(completed) - done  # shutdown's time is spent; unmarked, a spool keeps them
                break
            if trace.spans:  # else: log records whose spans never came, nothing to rebuild
                try:
                    pipeline.grade_trace(trace.spans, trace.logs, trace.last_seen, trace.revision)
                except Exception:
                    log.exception("grading trace %s failed", trace.trace_id)
            if self.spool is None:
                continue
            unmarked.append(trace.trace_id)
            if self.clock() - marked_at >= MARK_EVERY_SECONDS:
                self._mark_graded(unmarked)
                unmarked, marked_at = [], self.clock()
        if unmarked:
            self._mark_graded(unmarked)

    def _mark_graded(self, trace_ids: list[str]) -> None:
        """Mark runs graded in the spool once every sink has written their grades: a crash before the mark grades
        them again rather than lose them (so a run whose grades a sink wrote just before the crash is graded
        twice). Runs whose grades a sink holds to retry (a full disk) wait for a later call, once written."""
        assert self.spool is not None
        self.exporter.flush()
        unwritten = set().union(*(sink.unwritten() for sink in self._retrying_sinks), *(w() for w in self.marks_wait))
        if unwritten or self._unwritten_runs:
            self._unwritten_runs.update(trace_ids)
            trace_ids = [t for t in self._unwritten_runs if t not in unwritten]
            self._unwritten_runs.difference_update(trace_ids)
        try:
            self.spool.graded(trace_ids)
        except OSError as exc:
            log.error("cannot mark graded runs in the spool (they may be graded again after a crash): %s", exc)

    # --- reload ------------------------------------------------------------------------------

    async def reload(self, why: str) -> bool:
        """Load the config file again (see `reload.Reloader`); whether the new config is in use."""
        return await self.reloader.reload(why, lambda: self.config, self._install)

    async def _install(self, config: Config) -> None:
        """Put a reloaded config to use: its graders built off the loop, swapped in between two traces, then the
        limits of every step."""
        prepared = await asyncio.to_thread(self.pipeline.prepare, config)  # building graders takes a while
        await asyncio.get_running_loop().run_in_executor(self._grading, self.pipeline.install, prepared)
        self.config = config
        self.assembler.max_kept_bytes = config.limits.max_bytes_held * KEPT_SHARE
        self.assembler.reconfigure(config.assembly, keep_closed=_regrades(config))
        self.ingest.max_request_bytes = config.receivers.max_request_bytes
        self.ingest.max_bytes_receiving = config.limits.max_bytes_receiving
        self.pressure.configure(config.assembly, config.limits)


# Collector thresholds for a process holding many small objects for a while (spans until their run settles): a
# young generation this large is collected about 70 times less often than by default, and the held spans are
# rescanned by older collections that much less often too.
GC_THRESHOLDS = (50_000, 20, 20)


def _tune_gc() -> None:
    """Once started: move what lives for the whole process (modules, config, suites) out of the collector's
    sight (`gc.freeze`), and collect less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
