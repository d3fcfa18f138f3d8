"""A grading worker: `otelgrade serve`'s grading process without listeners of its own. Requests come from the
receiving process over its stdin (only traces whose id hashes to this worker); answers, metrics, and the runs
and grades for the grades page go back over its stdout. Everything else (assembly, the spool in a folder of
its own, grading, sinks, reload when the config file changes, bounded shutdown) is the single process's."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import orjson

from otelgrade.config import Config, load_config
from otelgrade.core.results import Grade
from otelgrade.core.settings import ReceiverSettings
from otelgrade.core.trajectory import Conversation, Trajectory
from otelgrade.export.ui import RunStore
from otelgrade.intake.receivers import ExportResult, InvalidRequest, Overloaded
from otelgrade.intake.receivers.base import Ingest
from otelgrade.service.admin import pages_url
from otelgrade.service.server import Server, _setup_logging
from otelgrade.service.workers import frames, handoff
from otelgrade.service.workers.merge import snapshot
from otelgrade.service.workers.runs import runs_json

log = logging.getLogger("otelgrade.worker")

PIPE_BYTES = 1 << 20  # the pipes' buffers (Linux allows up to /proc/sys/fs/pipe-max-size, 1 MiB by default)
# While the grading thread keeps sending frames (runs and grades for the page), how often the event loop writes them:
# each write wakes both processes. A frame the loop sends (an answer, metrics) writes those gathered before it.
FLUSH_SECONDS = 0.05


def for_worker(config: Config, index: int, count: int) -> Config:
    """The config as worker `index` of `count` runs it: no listeners (the receiving process has them), a spool
    folder of its own (`worker-<index>` in `spool_dir`; worker 0 uses `spool_dir` itself), and its share of the
    memory limits."""
    receivers = ReceiverSettings.model_validate(
        {
            **{name: None for name in config.receiver_addresses()},
            "max_request_bytes": config.receivers.max_request_bytes,
            "body_read_timeout": config.receivers.body_read_timeout,
        }
    )
    durability = config.durability
    if durability.spool_dir and index:  # worker 0 keeps the folder, and so replays what one process spooled there
        durability = durability.model_copy(update={"spool_dir": str(Path(durability.spool_dir) / f"worker-{index}")})
    limits = config.limits.model_copy(update={"max_bytes_held": max(1, config.limits.max_bytes_held // count)})
    assembly = config.assembly.model_copy(update={"max_traces": max(1, config.assembly.max_traces // count)})
    ui = config.ui  # links (webhooks, alerts) name the receiving process's grades page, not a worker's
    if not ui.external_url and (page := pages_url(config)):
        ui = ui.model_copy(update={"external_url": page})
    return dataclasses.replace(
        config,
        ui=ui,
        receivers=receivers,
        metrics=config.metrics.model_copy(update={"endpoint": None, "tls": None, "auth": None}),
        durability=durability,
        limits=limits,
        assembly=assembly,
    )


class Uplink:
    """Frames to the receiving process, from any thread, in order. A frame sent on the event loop is written at once
    (with any gathered before it); frames from other threads (runs, grades, turns) are gathered and written by the
    loop every `FLUSH_SECONDS` while they keep coming: a loop wake-up per frame cost more than the frames."""

    def __init__(self, loop: asyncio.AbstractEventLoop, transport: asyncio.WriteTransport) -> None:
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self.transport = transport
        self._waiting: list[bytes] = []
        self._armed = False  # a flush is due on the loop
        self._lock = threading.Lock()

    def send(self, data: bytes) -> None:
        if threading.get_ident() == self._loop_thread:
            with self._lock:
                waiting, self._waiting = self._waiting, []
            waiting.append(data)
            self._write(waiting)
            return
        with self._lock:
            self._waiting.append(data)
            if self._armed:
                return  # a flush is already due
            self._armed = True
        if not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: shutting down
                self._loop.call_soon_threadsafe(self._flush)

    def _flush(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
            if not waiting:
                self._armed = False  # the next frame wakes the loop
                return
        self._write(waiting)
        self._loop.call_later(FLUSH_SECONDS, self._flush)  # more are likely to follow: gather them meanwhile

    def _write(self, waiting: list[bytes]) -> None:
        if not self.transport.is_closing():
            self.transport.writelines(waiting)

    async def drain(self) -> None:
        """Wait until what was sent is written (the grades of the last runs, at shutdown)."""
        await asyncio.sleep(0)
        while (self._waiting or self.transport.get_write_buffer_size()) and not self.transport.is_closing():
            await asyncio.sleep(0.01)


class RunFeed(RunStore):
    """The grades page's store in a worker: it holds the runs it grades as one process does, and tells the receiving
    process, whose page lists them, each run's ids and grades; a run's trajectory goes up when its page asks."""

    def __init__(self, uplink: Uplink, keep: int) -> None:
        super().__init__(keep)
        self.uplink = uplink

    def add_run(self, trajectory: Trajectory) -> None:
        if isinstance(trajectory, Conversation):  # the page lists its turns
            self.uplink.send(frames.frame(frames.CONVERSATION, trajectory.model_dump_json().encode()))
            return
        super().add_run(trajectory)
        self.uplink.send(frames.run_frame(trajectory.trace_id, trajectory.span_id))

    def write(self, grades: Sequence[Grade]) -> None:
        super().write(grades)  # which runs this worker keeps follows their grades, as the page's list does
        if grades:
            self.uplink.send(frames.grades_frame(grades))


class PipeReceiver:
    """The worker's one receiver: export requests from the receiving process, read from a pipe."""

    def __init__(
        self, ingest: Ingest, server: Server, reader: asyncio.StreamReader, uplink: Uplink, outbox: handoff.Outbox
    ) -> None:
        self.ingest = ingest
        self.server = server
        self.reader = reader
        self.uplink = uplink
        self.outbox = outbox
        self._tasks: set[asyncio.Task[None]] = set()
        self._reading: asyncio.Task[None] | None = None
        self._was_busy = False
        self._told = b""  # what was last said of the runs not graded
        self._closing = False  # shutting down: requests are refused, turns routed here still held
        self._finish = asyncio.Event()  # every worker has graded what it held: no more turns come

    async def start(self) -> int:
        self._reading = asyncio.create_task(self._read())
        self.server.on_tick.append(self._look)
        self.server.on_pressure.append(self._report_busy)
        self.uplink.send(frames.frame(frames.READY))
        return 0

    async def stop(self) -> None:
        """Stop taking requests; the pipe is still read for the turns other workers route here while they grade
        what they hold (until `finish`)."""
        self._closing = True
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)

    async def finish(self, deadline: float) -> None:
        """At shutdown, once what this worker held is graded: say so, and wait (until `deadline`) for every worker
        to have, so the turns they route here are held before conversations are finished or kept."""
        self.uplink.send(frames.frame(frames.DRAINED))
        try:
            await asyncio.wait_for(self._finish.wait(), max(0.0, deadline - self.server.clock()))
        except TimeoutError:
            log.warning(
                "shutdown: not every grading worker graded what it held within server.shutdown_timeout; conversation "
                "turns routed here from now on are not held (counted in otelgrade_log_records_dropped_total)"
            )
        if self._reading is not None:
            self._reading.cancel()

    async def _read(self) -> None:
        async for got in frames.read_frames(self.reader):
            for kind, payload in got:
                try:
                    self._take(kind, payload)
                except Exception:  # one frame that does not read must not stop the others
                    log.exception("a frame from the receiving process could not be read")
        log.info("the receiving process closed the pipe: stopping")
        os.kill(os.getpid(), signal.SIGTERM)  # the server's own graceful, bounded shutdown

    def _take(self, kind: int, payload: bytes) -> None:
        """Act on one frame from the receiving process."""
        if kind == frames.EXPORT and self._closing:
            (request_id,) = frames.ID.unpack_from(payload)
            refused = ExportResult(0, "otelgrade is shutting down; retry later")
            self.uplink.send(frames.result_frame(request_id, frames.OVERLOADED, refused))
        elif kind == frames.EXPORT:
            task = asyncio.create_task(self._export(payload))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind == frames.HOLD_TURN:
            key, run = handoff.read_hold(payload)
            self.server.hold_passed_on(run, lambda: self.uplink.send(handoff.held_frame(key)))
        elif kind == frames.TURN_PASSED:
            self.outbox.held(payload)
        elif kind == frames.FINISH:
            self._finish.set()
        elif kind == frames.PING:  # answered by the event loop whatever the grading thread is doing
            self.uplink.send(frames.frame(frames.PONG))
        elif kind == frames.RUNS_OF:
            held = runs_json(self.server.runs.runs(payload[frames.ID.size :].decode()))
            self.uplink.send(frames.frame(frames.RUNS, payload[: frames.ID.size], held))
        elif kind == frames.SCRAPE:
            self._tell_unmatched()  # first: whoever reads these metrics then sees the page agree
            families = snapshot(self.server.metrics.registry)
            self.uplink.send(frames.frame(frames.METRICS, payload[: frames.ID.size], families))

    async def _export(self, payload: bytes) -> None:
        request_id, signal_, encoding, protocol, body = frames.read_export(payload)
        status, result = frames.OK, ExportResult()
        try:
            result = await self.ingest.export(signal_, body, encoding, protocol)
        except InvalidRequest as exc:
            status, result = frames.INVALID, ExportResult(0, str(exc))
        except Overloaded as exc:
            status, result = frames.OVERLOADED, ExportResult(0, str(exc))
        except Exception as exc:  # answered, so the sender retries rather than waits
            log.exception("keeping a request failed")
            status, result = frames.OVERLOADED, ExportResult(0, f"the grading worker failed: {exc}")
        self.uplink.send(frames.result_frame(request_id, status, result))
        self._report_busy()

    def _look(self, now: float) -> None:
        """At the loop's ticks (`Server.on_tick`): whether senders should wait (a reload may have changed the limits),
        and what arrived here without being graded (for the grades page), told when they changed."""
        self._report_busy()
        self._tell_unmatched()

    def _report_busy(self) -> None:
        """Tell the receiving process when this worker starts or stops wanting senders to wait: looked at when what
        it holds changes (a request kept, traces closed or graded), not on a timer of its own."""
        if self._closing:
            return
        busy = self.ingest.busy()
        if busy != self._was_busy:
            self._was_busy = busy
            self.uplink.send(frames.frame(frames.BUSY, b"\1" if busy else b"\0"))

    def _tell_unmatched(self) -> None:
        unmatched = orjson.dumps(dataclasses.asdict(self.server.pipeline.grading.unmatched_runs()))
        if unmatched != self._told:
            self._told = unmatched
            self.uplink.send(frames.frame(frames.UNMATCHED, unmatched))


async def _serve(config_path: str | None, index: int, count: int, fd_in: int, fd_out: int) -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**31)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd_in, "rb", buffering=0))
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(fd_out, "wb", buffering=0))
    uplink = Uplink(loop, transport)

    def load(path: str | Path | None = None) -> Config:
        return for_worker(load_config(path), index, count)

    config = load(config_path)
    server = Server(config, config_path, runs=RunFeed(uplink, config.ui.keep))
    server.reloader.load = load
    outbox = handoff.Outbox()  # turns passed on, not yet held: their traces stay unmarked in the spool
    if count > 1 and server.turn_router is None:  # a conversation's turns meet in the worker that owns it

        def route_turn(run: Trajectory) -> None:
            ids = handoff.ids_of(run.trace_id, run.span_id)
            outbox.sent(ids)
            uplink.send(frames.turn_frame(run.conversation_key or "", ids, run.model_dump_json().encode()))

        server.pipeline.grading.turn_router = route_turn
        server.marks_wait.append(outbox.unwritten)
    receivers: list[PipeReceiver] = []

    def make(ingest: Ingest) -> PipeReceiver:
        receivers.append(PipeReceiver(ingest, server, reader, uplink, outbox))
        return receivers[-1]

    async def finish(deadline: float) -> None:
        for receiver in receivers:
            await receiver.finish(deadline)

    server.extra_receivers.append(make)
    server.before_finishing = finish
    code = await server.serve()
    await uplink.drain()
    transport.close()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m otelgrade.service.workers.worker CONFIG|- INDEX COUNT`, started by the receiving process."""
    path, index, count = argv if argv is not None else sys.argv[1:]
    _setup_logging()
    for handler in logging.getLogger().handlers:  # which worker said it
        handler.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s [worker {index}] %(name)s: %(message)s"))
    # The frames get stdin and stdout to themselves: anything else printed goes to stderr, with the logs.
    fd_in, fd_out = os.dup(0), os.dup(1)
    for fd in (fd_in, fd_out):  # Linux: a request's bytes in one write, not 64 KiB at a time (each a wake-up)
        with contextlib.suppress(AttributeError, OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    os.dup2(2, 1)
    with open(os.devnull, "rb") as devnull:
        os.dup2(devnull.fileno(), 0)
    with contextlib.suppress(AttributeError, OSError):
        # Linux: die with the receiving process when it is killed, as one process would (its spool replays what
        # was held); a receiving process that stops normally has stopped its workers first.
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    return asyncio.run(_serve(None if path == "-" else path, int(index), int(count), fd_in, fd_out))


if __name__ == "__main__":
    raise SystemExit(main())
