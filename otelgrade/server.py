"""`otelgrade serve`: the OTLP receivers, the assembler, the grading worker and the metrics endpoint
on one asyncio loop, with hot reload (SIGHUP or a changed config file) and graceful shutdown.

Ingest never waits for grading: completed traces go to a single grading thread. Two limits keep
memory bounded, chosen so that nothing received is silently lost:
- the assembler never refuses input: when `assembly.max_traces` traces are held it closes the
  oldest early (reason `evicted`) and that trace is graded like any other;
- when grading falls behind by `assembly.max_traces` completed traces, the receivers answer
  503 (Retry-After) / UNAVAILABLE, which OTLP exporters retry with backoff. Back-pressure beats
  dropping here: the runs are still in the senders' queues, and grading catches up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
from otelgrade.errors import ConfigError
from otelgrade.export import Exporter
from otelgrade.grading import Grading, Suite
from otelgrade.ingest import Ingest
from otelgrade.judges import DISABLED, JudgeClient
from otelgrade.judges.runner import JudgeRunner
from otelgrade.metrics import Metrics
from otelgrade.receivers import Receiver, receiver_types, split_address

log = logging.getLogger("otelgrade")

TICK_SECONDS = 0.05  # how often completed traces are collected from the assembler
CONFIG_CHECK_SECONDS = 1.0  # how often the config file's mtime is compared
STOP_GRACE_SECONDS = 5.0  # how long calls in progress may finish once shutdown begins


def run(config_path: str | None) -> int:
    """Serve until SIGTERM/SIGINT; 0 after a clean shutdown, 2 for a bad config, 1 if it cannot start."""
    _setup_logging()
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(f"otelgrade: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(Server(config, config_path).serve())


def _setup_logging() -> None:
    if not logging.getLogger().handlers:
        level = os.environ.get("OTELGRADE_LOG_LEVEL", "INFO").upper()
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


class Server:
    def __init__(self, config: Config, config_path: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.config_path = config_path
        self.clock = clock
        self.metrics = Metrics(label_limit=config.metrics.label_limit)
        with contextlib.suppress(ValueError):  # platforms without /proc
            ProcessCollector(registry=self.metrics.registry)
        self.assembler = Assembler(config.assembly, self.metrics)
        self.ready = False
        self._stop = asyncio.Event()
        self._grading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otelgrade-grade")
        self._decoding = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otelgrade-decode")
        self._backlog = 0  # completed traces queued for the grading thread
        self._was_busy = False
        self.ingest = Ingest(
            self.assembler,
            self.metrics,
            config.receivers.max_request_bytes,
            clock,
            decode_executor=self._decoding,
            busy=self.grading_behind,
        )
        self.ports: dict[str, int] = {}  # receiver name -> bound port
        self._pending: set[asyncio.Future[Any]] = set()
        self._reload_lock = asyncio.Lock()
        self._config_mtime = self._mtime()
        self.exporter = Exporter(self.metrics, [sink.build(self.metrics) for sink in config.sinks])
        self._judges: JudgeRunner | None = None  # started on the loop, in serve()
        self.grading = Grading(self._suites(config), self.exporter, self.metrics, clock=clock)

    @property
    def grpc_port(self) -> int | None:
        return self.ports.get("grpc")

    @property
    def http_port(self) -> int | None:
        return self.ports.get("http")

    def _suites(self, config: Config) -> list[Suite]:
        judges: JudgeClient = self._judges if self._judges is not None else DISABLED
        return [Suite.build(s.name, s.match, s.graders, judges) for s in config.suites]

    # --- lifecycle ---------------------------------------------------------------------------

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_stop_signal, sig)
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        try:
            await self._start_grading()
            metrics_runner = await self._start_metrics_endpoint()
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
        self.ready = False
        await asyncio.gather(*(r.stop() for r in receivers), return_exceptions=True)
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
        self._grade(self.assembler.drain())
        await self._close_grading()
        if metrics_runner is not None:
            await metrics_runner.cleanup()
        log.info("stopped")
        return 0

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
        self._judges = await _start_judges(self.config, self.metrics, self.grading.judge_graders())
        self.grading.install(self._suites(self.config))

    async def _close_grading(self) -> None:
        """Wait for every queued trace to be graded, then close judges (answering queued runs) and sinks."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._judges is not None:
            try:
                await self._judges.close(drain=True)
            except Exception:
                log.exception("closing the judge runner failed")
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._grading, self.exporter.flush)
            await loop.run_in_executor(self._grading, self.exporter.close)
        except Exception:
            log.exception("closing the sinks failed")
        self._grading.shutdown(wait=True)
        self._decoding.shutdown(wait=True)

    async def _start_receivers(self) -> list[Receiver]:
        started: list[Receiver] = []
        types = receiver_types()
        for name, address in self.config.receiver_addresses().items():
            receiver = types[name].factory(address, self.ingest)
            self.ports[name] = await receiver.start()
            started.append(receiver)
            log.info("OTLP/%s listening on %s (port %d)", name, address, self.ports[name])
        return started

    async def _start_metrics_endpoint(self) -> web.AppRunner | None:
        endpoint = self.config.metrics.endpoint
        if not endpoint:
            return None
        host, port = split_address(endpoint)
        app = web.Application()
        app.router.add_get("/metrics", self._metrics_page)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, host, port, reuse_address=True).start()
        log.info("metrics on http://%s:%d/metrics (/healthz, /readyz)", host, port)
        return runner

    # --- the loop's periodic work ------------------------------------------------------------

    async def _tick(self) -> None:
        next_config_check = self.clock() + CONFIG_CHECK_SECONDS
        while True:
            await asyncio.sleep(TICK_SECONDS)
            now = self.clock()
            self._grade(self.assembler.poll(now))
            if now >= next_config_check:
                next_config_check = now + CONFIG_CHECK_SECONDS
                if self._mtime() != self._config_mtime:
                    self._config_mtime = self._mtime()
                    self._spawn_reload("config file changed")

    def grading_behind(self) -> bool:
        return self._backlog >= self.config.assembly.max_traces

    def _grade(self, completed: list[CompletedTrace]) -> None:
        """Queue completed traces for the grading thread; the event loop does not wait for it."""
        if completed:
            future = asyncio.get_running_loop().run_in_executor(self._grading, self._grade_batch, completed)
            self._backlog += len(completed)
            self._pending.add(future)
            future.add_done_callback(self._pending.discard)
            future.add_done_callback(lambda _: self._graded(len(completed)))
        busy = self.grading_behind()
        if busy != self._was_busy:
            self._was_busy = busy
            if busy:
                log.warning("grading is %d traces behind: asking senders to retry later", self._backlog)
            else:
                log.info("grading caught up: accepting requests again")

    def _graded(self, count: int) -> None:
        self._backlog -= count

    def _grade_batch(self, completed: list[CompletedTrace]) -> None:
        grading = self.grading
        for trace in completed:
            if not trace.spans:
                continue  # log records whose spans never came: nothing to rebuild
            try:
                grading.grade_trace(trace.spans, trace.logs, last_seen=trace.last_seen)
            except Exception:
                log.exception("grading trace %s failed", trace.trace_id)

    # --- reload ------------------------------------------------------------------------------

    def _mtime(self) -> int | None:
        if self.config_path is None:
            return None
        try:
            return os.stat(self.config_path).st_mtime_ns
        except OSError:
            return None

    async def reload(self, why: str) -> bool:
        """Load the config again; a config that does not load or build is refused and the old one kept."""
        async with self._reload_lock:
            self._config_mtime = self._mtime()
            if self.config_path is None:
                log.info("%s: running on the embedded default config, nothing to reload", why)
                return False
            try:
                config = load_config(self.config_path)
                suites = self._suites(config)
                await asyncio.get_running_loop().run_in_executor(self._grading, self.grading.install, suites)
            except Exception as exc:
                self.metrics.config_reloads.labels("refused").inc()
                log.error("config reload (%s) refused, the running config stays: %s", why, exc)
                return False
            old, self.config = self.config, config
            self.assembler.reconfigure(config.assembly)
            self.ingest.max_request_bytes = config.receivers.max_request_bytes
            fixed = [
                key for key in ("receivers", "metrics", "judge", "sinks") if getattr(old, key) != getattr(config, key)
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

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.ready:
            return web.Response(text="ready\n")
        return web.Response(status=503, text="not ready\n")


async def _start_judges(config: Config, metrics: Metrics, judge_graders: list[str]) -> JudgeRunner | None:
    """The judge runner, or None when it cannot start (judge graders then grade `skipped`)."""
    runner = JudgeRunner(config.judge, metrics)
    try:
        await runner.start(judge_graders)
    except Exception as exc:
        log.error("judge graders are disabled: the judge runner did not start: %s", exc)
        return None
    return runner
