"""The durability spool: every accepted OTLP request is kept on disk until its runs are graded, so a crash
(kill -9 included) loses no acknowledged run, and runs graded before it are not graded again.

`spool_dir` holds (and a `lock` file keeps a second process out):
- `segment-<n>.spool`: append-only records `length (4 bytes) | crc32 (4) | signal (1) | encoding (1) | body`,
  lengths big-endian. A new segment starts past `segment_bytes`, at every start-up, and after the last one
  was deleted; a segment is deleted whole once every trace it carries is graded (or had already been decided
  when the request came).
- `graded.log`: the ids of graded traces, one per line. Replay skips them, and they restore the assembler's
  decision cache; the file is compacted to what replay and that cache still need.

Writes and syncs run on the spool's own thread, so the event loop never waits on the disk; `append` returns
once the request is as durable as `fsync` asks (`batch`: synced, requests arriving together sharing one
sync; `always`: the same, and graded marks synced too; `never`: handed to the OS).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import struct
import threading
import zlib
from collections.abc import Collection, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from otelgrade.metrics import Metrics
from otelgrade.receivers import Encoding, Signal

log = logging.getLogger(__name__)

Fsync = Literal["batch", "always", "never"]

_HEADER = struct.Struct(">II")  # payload length, crc32 of the payload
_SIGNALS: tuple[Signal, ...] = ("traces", "logs")
_ENCODINGS: tuple[Encoding, ...] = ("protobuf", "json")
_GRADED = "graded.log"
_TRACE_ID_CHARS = 32


@dataclass(frozen=True, slots=True)
class Record:
    """One acknowledged export request, as received (after any gzip)."""

    signal: Signal
    encoding: Encoding
    body: bytes

    def encode(self) -> tuple[bytes, bytes]:
        """(header, payload head); the body follows the head."""
        head = bytes((_SIGNALS.index(self.signal), _ENCODINGS.index(self.encoding)))
        crc = zlib.crc32(self.body, zlib.crc32(head))
        return _HEADER.pack(len(head) + len(self.body), crc), head


class Spool:
    """An open spool directory. `replay` (at start-up) and `append` run on the event loop's thread; `graded` may
    be called from any thread."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        fsync: Fsync = "batch",
        segment_bytes: int = 64 * 1024 * 1024,
        keep_graded: int = 100_000,
        metrics: Metrics | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:  # one process per spool; the kernel lets go of the lock when the process dies, kill -9 included
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            raise OSError(f"the spool {self.directory} is in use by another otelgrade process") from None
        self.fsync, self.segment_bytes, self.keep_graded = fsync, segment_bytes, keep_graded
        self.metrics = metrics if metrics is not None else Metrics()
        self._lock = threading.Lock()
        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otelgrade-spool")
        self._sizes: dict[int, int] = {n: path.stat().st_size for n, path in self._segments()}
        self._pending: dict[int, set[str]] = {n: set() for n in self._sizes}  # segment -> traces not yet graded
        self._where: dict[str, set[int]] = {}  # trace -> segments holding it, while pending
        self._active: int | None = None  # the segment being appended to
        self._fd = -1
        self._next_segment = max(self._sizes, default=0) + 1
        # graded ids in order; `_first` is the absolute index of `_graded[0]` in the log as ever written
        self._graded: list[str] = self._read_graded()
        self._graded_set = set(self._graded)
        self._first = 0
        self._born = dict.fromkeys(self._sizes, 0)  # segment -> graded count when it started
        self._graded_fd = os.open(self.directory / _GRADED, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._next_sync: asyncio.Future[None] | None = None
        self._sync_task: asyncio.Task[None] | None = None
        self._update_size()

    # --- start-up --------------------------------------------------------------------------------

    def graded_ids(self) -> list[str]:
        """Trace ids graded before this start, oldest first."""
        return list(self._graded)

    def replay(self) -> Iterator[tuple[int, Record]]:
        """Every record of the segments left by earlier runs, in order, as (segment, record). A torn last record
        (a write cut short: it was never acknowledged) is cut off the file."""
        for number in sorted(self._sizes):
            yield from self._read_segment(number)

    def hold(self, segment: int, trace_ids: Iterable[str]) -> None:
        """Keep `segment` until these traces are graded (those graded already are skipped)."""
        with self._lock:
            self._hold(segment, trace_ids)

    def replayed(self) -> None:
        """Replay is over: delete the replayed segments no trace holds."""
        with self._lock:
            for number in [n for n, traces in self._pending.items() if not traces]:
                self._delete(number)
            self._update_size()

    # --- intake ----------------------------------------------------------------------------------

    async def append(self, record: Record, trace_ids: Collection[str]) -> None:
        """Write a request before it is acknowledged, and keep it until these traces are graded. Raises `OSError`
        when the disk refuses it."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._io, self._write, record, trace_ids)
        if self.fsync != "never":
            await self._synced(loop)

    async def _synced(self, loop: asyncio.AbstractEventLoop) -> None:
        """Group commit: wait for an fsync that starts after this call; concurrent callers share it."""
        if self._next_sync is None:
            self._next_sync = loop.create_future()
        waiting = self._next_sync
        if self._sync_task is None:
            self._sync_task = loop.create_task(self._sync_rounds(loop))
        await asyncio.shield(waiting)

    async def _sync_rounds(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while self._next_sync is not None:
                round_, self._next_sync = self._next_sync, None
                try:
                    await loop.run_in_executor(self._io, self._fsync_active)
                except OSError as exc:
                    round_.set_exception(exc)
                else:
                    round_.set_result(None)
        finally:
            self._sync_task = None

    def _write(self, record: Record, trace_ids: Collection[str]) -> None:
        header, head = record.encode()
        size = len(header) + len(head) + len(record.body)
        with self._lock:
            used = self._sizes[self._active] if self._active is not None else None
            if used is None or (used > 0 and used + size > self.segment_bytes):
                self._rotate()
            assert self._active is not None
            written = os.writev(self._fd, (header, head, record.body))
            self._sizes[self._active] += written
            if written != size:
                raise OSError(f"short write to the spool ({written} of {size} bytes)")
            self._hold(self._active, trace_ids)
            self._update_size()

    def _rotate(self) -> None:
        """Close the active segment (kept while traces hold it) and start the next one."""
        old = self._active
        if old is not None:
            if self.fsync != "never":
                os.fsync(self._fd)
            os.close(self._fd)
            self._active = None
            if not self._pending[old]:
                self._delete(old)
        number = self._next_segment
        self._next_segment += 1
        self._fd = os.open(self._path(number), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        if self.fsync != "never":
            _sync_directory(self.directory)
        self._active, self._sizes[number], self._pending[number] = number, 0, set()
        self._born[number] = self._first + len(self._graded)

    def _fsync_active(self) -> None:
        with self._lock:  # a dup, so that `graded` may close the segment meanwhile
            fd = os.dup(self._fd) if self._fd >= 0 else -1
        if fd >= 0:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    # --- graded runs -----------------------------------------------------------------------------

    def graded(self, trace_ids: Collection[str]) -> None:
        """These traces are graded: record it (replay skips them) and delete segments nothing holds any more."""
        if not trace_ids:
            return
        data = "".join(f"{t}\n" for t in trace_ids).encode()
        with self._lock:
            os.write(self._graded_fd, data)
            if self.fsync == "always":
                os.fsync(self._graded_fd)
            self._graded.extend(trace_ids)
            self._graded_set.update(trace_ids)
            for trace_id in trace_ids:
                for number in self._where.pop(trace_id, ()):
                    traces = self._pending[number]
                    traces.discard(trace_id)
                    if not traces:
                        if number == self._active:  # the next append starts a new segment
                            os.close(self._fd)
                            self._fd, self._active = -1, None
                        self._delete(number)
            self._compact()
            self._update_size()

    def _hold(self, segment: int, trace_ids: Iterable[str]) -> None:
        for trace_id in trace_ids:
            if trace_id not in self._graded_set:
                self._pending[segment].add(trace_id)
                self._where.setdefault(trace_id, set()).add(segment)

    def _compact(self) -> None:
        """Rewrite graded.log without the ids neither replay nor the decision cache needs: those graded before
        every remaining segment began and before the last `keep_graded`."""
        if len(self._graded) <= 2 * self.keep_graded:
            return
        end = self._first + len(self._graded)
        keep_from = min([end - self.keep_graded, *self._born.values()])
        if keep_from - self._first < len(self._graded) // 2:
            return  # not worth a rewrite yet
        kept = self._graded[keep_from - self._first :]
        temporary = self.directory / (_GRADED + ".new")
        temporary.write_text("".join(f"{t}\n" for t in kept))
        if self.fsync != "never":
            with temporary.open("rb") as file:
                os.fsync(file.fileno())
        os.replace(temporary, self.directory / _GRADED)
        os.close(self._graded_fd)
        self._graded_fd = os.open(self.directory / _GRADED, os.O_WRONLY | os.O_APPEND)
        self._graded, self._graded_set, self._first = kept, set(kept), keep_from

    # --- files -----------------------------------------------------------------------------------

    def _path(self, number: int) -> Path:
        return self.directory / f"segment-{number:012d}.spool"

    def _segments(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.directory.glob("segment-*.spool"):
            digits = path.stem.removeprefix("segment-")
            if digits.isdigit():
                found.append((int(digits), path))
        return sorted(found)

    def _delete(self, number: int) -> None:
        self._path(number).unlink(missing_ok=True)
        for table in (self._sizes, self._pending, self._born):
            table.pop(number, None)

    def _read_graded(self) -> list[str]:
        path = self.directory / _GRADED
        if not path.exists():
            return []
        lines = path.read_bytes().split(b"\n")
        # a last line without its newline was cut short by a crash: that mark never happened
        return [line.decode() for line in lines[:-1] if len(line) == _TRACE_ID_CHARS]

    def _read_segment(self, number: int) -> Iterator[tuple[int, Record]]:
        path = self._path(number)
        good = 0
        with path.open("rb") as file:
            while True:
                header = file.read(_HEADER.size)
                if not header:
                    break
                payload = file.read(_HEADER.unpack(header)[0]) if len(header) == _HEADER.size else b""
                record = _decode(header, payload)
                if record is None:
                    break
                good += len(header) + len(payload)
                yield number, record
        if good < path.stat().st_size:
            log.warning(
                "spool %s: %d bytes of an unfinished write at its end dropped (that request was never acknowledged)",
                path.name,
                path.stat().st_size - good,
            )
            os.truncate(path, good)
            self._sizes[number] = good

    def _update_size(self) -> None:
        """Under the lock (or before other threads use the spool): the spool's size gauge."""
        self.metrics.spool_bytes.set(sum(self._sizes.values()))

    def close(self) -> None:
        """Sync and close the files (the spool's thread finishes what it was given first); the active segment
        goes too when every trace in it is graded."""
        self._io.shutdown(wait=True)
        with self._lock:
            for fd in (self._fd, self._graded_fd):
                if fd >= 0:
                    if self.fsync != "never":
                        os.fsync(fd)
                    os.close(fd)
            self._fd = self._graded_fd = -1
            active, self._active = self._active, None
            if active is not None and not self._pending[active]:
                self._delete(active)
            self._update_size()
        os.close(self._lock_fd)


def _decode(header: bytes, payload: bytes) -> Record | None:
    """The record, or None when it is torn or corrupt."""
    if len(header) < _HEADER.size:
        return None
    length, crc = _HEADER.unpack(header)
    if len(payload) != length or length < 2 or zlib.crc32(payload) != crc:
        return None
    signal, encoding = payload[0], payload[1]
    if signal >= len(_SIGNALS) or encoding >= len(_ENCODINGS):
        return None
    return Record(_SIGNALS[signal], _ENCODINGS[encoding], payload[2:])


def _sync_directory(directory: Path) -> None:
    """Make a new file's directory entry durable (POSIX needs an fsync of the directory)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
