"""`otelgrade serve`: the OTLP receivers, the assembler, the grading worker and the metrics endpoint
on one asyncio loop, with hot reload (SIGHUP or a changed config file) and graceful shutdown.

Ingest never waits for grading: completed traces go to a single grading thread. Limits keep
memory bounded, chosen so that nothing received is silently lost:
- the assembler never refuses input: when `assembly.max_traces` traces are held it closes the
  oldest early (reason `evicted`) and that trace is graded like any other;
- when grading falls behind by `assembly.max_traces` completed traces, or the bytes held (runs
  waiting to complete or to be graded) reach `limits.max_bytes_held`, the receivers answer
  503 (Retry-After) / UNAVAILABLE, which OTLP exporters retry with backoff. Back-pressure beats
  dropping here: the runs are still in the senders' queues, and grading catches up. Once what was
  held after such a burst is graded, the freed memory is handed back to the OS.
With `durability.spool_dir`, accepted requests are spooled before they are acknowledged and
replayed at start-up (on a thread: the probes answer meanwhile), and graded runs are marked in the spool once every
sink has written their grades (runs whose grades a sink holds to retry wait in the spool). A sink that can read back
what it holds (JSONL) does not write again the grades of runs graded just before a crash.
Shutdown is bounded by `server.shutdown_timeout`, however much is held: held runs are code-graded until it
is spent, judges get what is left of it, and the runs not graded by then are counted in the log (with a spool
they stay in it and are graded at the next start). A reload reads and builds the new config on a thread, so the
loop keeps answering meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web
from prometheus_client import ProcessCollector
from prometheus_client.exposition import choose_encoder

from otelgrade.assemble import Assembler, CompletedTrace
from otelgrade.config import Config, load_config
from otelgrade.conversations import Journal
from otelgrade.errors import ConfigError
from otelgrade.ingest import Ingest
from otelgrade.judges.runner import JudgeRunner
from otelgrade.metrics import Metrics
from otelgrade.pipeline import Pipeline
from otelgrade.receivers import Access, Receiver, receiver_types, split_address, unauthorized
from otelgrade.sinks import RecallingSink, RetryingSink
from otelgrade.spool import Spool
from otelgrade.turns import TurnRouter
from otelgrade.ui import RunLog, RunStore, add_grade_pages, page_address
from otelgrade.ui.runlog import printable

log = logging.getLogger("otelgrade")

PROBES = frozenset({"/healthz", "/readyz"})
TICK_SECONDS = 0.05  # the longest the loop's periodic work waits (memory, reload checks, the runs log)
MIN_TICK_SECONDS = 0.005  # the shortest: traces that complete within it are collected together
CONFIG_CHECK_SECONDS = 1.0  # how often the config file's mtime and size are compared
UNMATCHED_REPORT_SECONDS = 60.0  # how often the runs no suite matched are described in the log
CONFIG_SETTLE_SECONDS = 10.0  # a config file still changing after this long is not read
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


def pages_url(config: Config) -> str:
    """Where people reach the grades page (`ui.external_url`, else the metrics endpoint's address), no final `/`;
    "" when there is no page."""
    endpoint = config.metrics.endpoint
    if not endpoint:
        return (config.ui.external_url or "").rstrip("/")
    host, port = split_address(endpoint)
    tls = Access.of(config.metrics.tls, config.metrics.auth).scheme == "https"
    return page_address(config.ui, host, port, tls).rstrip("/")


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
    def __init__(self, config: Config, config_path: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.config_path = config_path
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
        self._backlog = 0  # completed traces queued for the grading thread
        self._backlog_bytes = 0.0  # and the bytes received for them
        self._was_busy = False
        self._held_peak = 0.0  # the most bytes held since memory was last handed back to the OS
        self._grade_until: float | None = None  # set at shutdown: traces the grading thread reaches later wait
        self._ungraded = 0  # traces not graded at shutdown for want of time (written by the grading thread)
        self.spool: Spool | None = None  # opened in serve(), with `durability.spool_dir`
        self.ingest = Ingest(
            self.assembler,
            self.metrics,
            config.receivers.max_request_bytes,
            clock,
            decode_executor=self._decoding,
            busy=self.overloaded,
            max_bytes_receiving=config.limits.max_bytes_receiving,
            body_read_timeout=config.receivers.body_read_timeout,
        )
        self._pending: set[asyncio.Future[Any]] = set()
        self._reload_lock = asyncio.Lock()
        self._config_stamp = self._stamp()
        self.runs = RunStore(config.ui.keep)  # the grades page's runs
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
        self._judges: JudgeRunner | None = None  # started on the loop, in serve()
        self.turn_router: TurnRouter | None = None  # with replicas, each turn goes to the conversation router
        if config.conversations.route_turns:
            self.turn_router = TurnRouter(config.conversations.route_turns, self.metrics)
            self.pipeline.grading.turn_router = self.turn_router
        self.ingest.on_turns = self._turns_received

    # --- lifecycle ---------------------------------------------------------------------------

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_stop_signal, sig)
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        try:
            await self._start_grading()
            metrics_runner = await self._start_metrics_endpoint()
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
            await loop.run_in_executor(self._grading, self.exporter.flush)
            await loop.run_in_executor(self._grading, self.exporter.close)
        except Exception:
            log.exception("closing the sinks failed")
        self._grading.shutdown(wait=True)
        self._decoding.shutdown(wait=True)
        if self.spool is not None:
            self.spool.close()
        if self.pipeline.grading.conversations.journal is not None:
            self.pipeline.grading.conversations.journal.close()

    def _turns_received(self, bodies: list[str]) -> None:
        """Turn records the conversation router sent this replica: held on the grading thread."""
        try:
            self._grading.submit(self.pipeline.grading.hold_routed, bodies)
        except RuntimeError:  # the grading thread has stopped: shutting down
            self.metrics.log_records_dropped.labels("shutdown").inc(len(bodies))

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
        return started

    async def _start_metrics_endpoint(self) -> web.AppRunner | None:
        endpoint = self.config.metrics.endpoint
        if not endpoint:
            return None
        host, port = split_address(endpoint)
        access = Access.of(self.config.metrics.tls, self.config.metrics.auth)
        # The token guards every route but the probes: liveness and readiness say nothing, and orchestrators'
        # health checks (the image's HEALTHCHECK, Kubernetes probes) carry no token.
        app = web.Application(middlewares=access.middlewares(self._unauthenticated, PROBES))
        app.router.add_get("/metrics", self._metrics_page)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        add_grade_pages(app, self.runs, self.config.ui, self.pipeline.grading.unmatched_runs)
        self.metrics.grades_page.labels(page_address(self.config.ui, host, port, access.scheme == "https")).set(1)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, host, port, reuse_address=True, ssl_context=access.ssl_context()).start()
        log.info("metrics on %s://%s:%d/metrics (/healthz, /readyz); grades page on /", access.scheme, host, port)
        return runner

    # --- the loop's periodic work ------------------------------------------------------------

    async def _tick(self) -> None:
        next_config_check = self.clock() + CONFIG_CHECK_SECONDS
        next_mark_retry = self.clock()
        next_unmatched_report = self.clock() + UNMATCHED_REPORT_SECONDS
        while True:
            await asyncio.sleep(self._until_next_tick())
            now = self.clock()
            self._grade(self.assembler.poll(now))
            settles = self.pipeline.next_deadline()
            if settles is not None and settles <= now:
                settling = asyncio.get_running_loop().run_in_executor(self._grading, self.pipeline.settle)
                self._pending.add(settling)
                settling.add_done_callback(self._pending.discard)
            if self._unwritten_runs and now >= next_mark_retry:
                next_mark_retry = now + MARK_RETRY_SECONDS
                asyncio.get_running_loop().run_in_executor(self._grading, self._mark_graded, [])
            self.pipeline.tick()
            self.run_log.tick()
            if now >= next_unmatched_report:
                next_unmatched_report = now + UNMATCHED_REPORT_SECONDS
                if line := self.pipeline.unmatched_report():
                    log.warning("%s", printable(line))
            self._watch_memory()
            if now >= next_config_check:
                next_config_check = now + CONFIG_CHECK_SECONDS
                if self._stamp() != self._config_stamp:
                    self._config_stamp = self._stamp()
                    self._spawn_reload("config file changed")

    def _until_next_tick(self) -> float:
        """Wake when the assembler's next trace may complete (so a run is graded `settle` after its last span,
        not up to a tick later), within [MIN_TICK_SECONDS, TICK_SECONDS]."""
        deadlines = [d for d in (self.assembler.next_deadline(), self.pipeline.next_deadline()) if d]
        deadline = min(deadlines, default=None)
        if deadline is None:
            return TICK_SECONDS
        return min(TICK_SECONDS, max(MIN_TICK_SECONDS, deadline - self.clock()))

    def bytes_held(self) -> float:
        """Bytes held for runs waiting to complete or to be graded, and for graded ones kept for late spans."""
        return self.assembler.bytes_in_flight + self.assembler.bytes_kept + self._backlog_bytes

    def overloaded(self) -> bool:
        """Whether senders should back off: grading is `assembly.max_traces` traces behind, or the bytes held
        reach `limits.max_bytes_held`."""
        return (
            self._backlog >= self.config.assembly.max_traces or self.bytes_held() >= self.config.limits.max_bytes_held
        )

    def _watch_memory(self) -> None:
        """Export what is held; once a burst that held much has drained, hand the freed memory to the OS."""
        held = self.bytes_held()
        self.metrics.bytes_held.set(held)
        self.metrics.grading_backlog.set(self._backlog)
        limit = self.config.limits.max_bytes_held
        self._held_peak = max(self._held_peak, held)
        if self._held_peak >= limit / 8 and held <= limit / 16 and not self._backlog:
            self._held_peak = 0.0
            asyncio.get_running_loop().run_in_executor(self._grading, _release_memory)

    def _grade(self, completed: list[CompletedTrace]) -> None:
        """Queue completed traces for the grading thread; the event loop does not wait for it."""
        if completed:
            future = asyncio.get_running_loop().run_in_executor(self._grading, self._grade_batch, completed)
            nbytes = sum(trace.nbytes for trace in completed)
            self._backlog += len(completed)
            self._backlog_bytes += nbytes
            self._pending.add(future)
            future.add_done_callback(self._pending.discard)
            future.add_done_callback(lambda _: self._graded(len(completed), nbytes))
        busy = self.overloaded()
        if busy != self._was_busy:
            self._was_busy = busy
            if busy:
                log.warning(
                    "holding %.0f MB, %d traces waiting to be graded: asking senders to retry later",
                    self.bytes_held() / 1e6,
                    self._backlog,
                )
            else:
                log.info("caught up: accepting requests again")

    def _graded(self, count: int, nbytes: float) -> None:
        self._backlog -= count
        self._backlog_bytes = max(0.0, self._backlog_bytes - nbytes) if self._backlog else 0.0

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
        unwritten = set().union(*(sink.unwritten() for sink in self._retrying_sinks))
        if unwritten or self._unwritten_runs:
            self._unwritten_runs.update(trace_ids)
            trace_ids = [t for t in self._unwritten_runs if t not in unwritten]
            self._unwritten_runs.difference_update(trace_ids)
        try:
            self.spool.graded(trace_ids)
        except OSError as exc:
            log.error("cannot mark graded runs in the spool (they may be graded again after a crash): %s", exc)

    # --- reload ------------------------------------------------------------------------------

    def _stamp(self) -> tuple[int, int] | None:
        """The config file's (mtime, size), or None without one."""
        if self.config_path is None:
            return None
        try:
            stat = os.stat(self.config_path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    async def _read_settled(self) -> Config:
        """The config file, read once it has stopped changing (the same mtime and size a tick apart, and
        unchanged while it was read), so a file caught half-written is never installed."""
        assert self.config_path is not None
        give_up = self.clock() + CONFIG_SETTLE_SECONDS
        while True:
            before = self._stamp()
            await asyncio.sleep(TICK_SECONDS)
            if self._stamp() == before:
                config = await asyncio.to_thread(load_config, self.config_path)  # the loop keeps answering
                if self._stamp() == before:
                    self._config_stamp = before
                    return config
            if self.clock() > give_up:
                raise ConfigError(f"the file kept changing for {CONFIG_SETTLE_SECONDS:g}s", file=self.config_path)

    def _refuse_empty(self, config: Config) -> None:
        """A config that grades nothing replaces one that grades something only when it says so (`suites: []`):
        an emptied or truncated file must not silently stop grading."""
        if not config.suites and self.config.suites and not config.suites_listed:
            raise ConfigError(
                f"it has no suites, so it would grade nothing while the running config grades with "
                f"{len(self.config.suites)} suite(s); to grade nothing on purpose, write `suites: []`",
                file=config.source,
            )

    async def reload(self, why: str) -> bool:
        """Load the config again; a config that does not load or build, or would stop all grading without
        saying so, is refused (logged, counted) and the old one kept."""
        async with self._reload_lock:
            if self.config_path is None:
                log.info("%s: running on the embedded default config, nothing to reload", why)
                return False
            try:
                config = await self._read_settled()
                self._refuse_empty(config)
                prepared = await asyncio.to_thread(self.pipeline.prepare, config)  # building graders takes a while
                await asyncio.get_running_loop().run_in_executor(self._grading, self.pipeline.install, prepared)
            except Exception as exc:
                self.metrics.config_reloads.labels("refused").inc()
                log.error("config reload (%s) refused, the running config stays: %s", why, exc)
                return False
            old, self.config = self.config, config
            self.assembler.max_kept_bytes = config.limits.max_bytes_held * KEPT_SHARE
            self.assembler.reconfigure(config.assembly, keep_closed=_regrades(config))
            self.ingest.max_request_bytes = config.receivers.max_request_bytes
            self.ingest.max_bytes_receiving = config.limits.max_bytes_receiving
            fixed = [
                key
                for key in ("receivers", "metrics", "judge", "sinks", "ui", "durability", "conversations")
                if getattr(old, key) != getattr(config, key)
            ]
            if fixed:
                log.warning("config reload: changes to %s take effect after a restart", ", ".join(fixed))
            self.metrics.config_reloads.labels("ok").inc()
            log.info("config reloaded (%s): %d suite(s)", why, len(config.suites))
            return True

    # --- metrics endpoint --------------------------------------------------------------------

    async def _metrics_page(self, request: web.Request) -> web.Response:
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        body = encoder(self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": content_type})

    def _unauthenticated(self, request: web.Request) -> web.Response:
        self.metrics.requests.labels("metrics", "none", "unauthenticated").inc()
        return unauthorized()

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.ready:
            return web.Response(text="ready\n")
        return web.Response(status=503, text="not ready\n")


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


def _release_memory() -> None:
    """Hand memory freed after a burst back to the OS: a full collection, then glibc's `malloc_trim` (freed
    heap pages otherwise stay with the process)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
