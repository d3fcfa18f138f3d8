"""The durability spool: every accepted OTLP request is kept on disk until its runs are graded, so a crash
(kill -9 included) loses no acknowledged run, and runs graded before it are not graded again.

`spool_dir` holds (and a `lock` file keeps a second process out):
- `segment-<n>.spool`: a header `OTGSPOOL | format version (2 bytes) | 0 (2 bytes)`, then append-only records
  `mark (4 bytes) | length (4) | crc32 of the payload (4) | crc32 of the 12 bytes before (4) | payload`, the
  payload being `signal (1) | encoding (1) | body`; integers are big-endian. A new segment starts past
  `segment_bytes`, at every start-up, and after the last one was deleted; a segment is deleted whole once every
  trace it carries is graded (or had already been decided when the request came). A write the disk refuses is cut
  back off before anything else is appended, so a record is whole or absent.
- `graded.log`: the ids of graded traces, one per line. Replay skips them, and they restore the assembler's
  decision cache; the file is compacted to what replay and that cache still need.

Damage loses only what is damaged. Replay reads every record whose checksums hold: a damaged stretch (a flipped
byte, a bad length) is skipped, logged with its segment and offset and counted in
`otelgrade_spool_damage_total{kind}`, and reading resumes at the next record (found by its mark). A segment of a
format version this release does not know is left as it is, with an error saying so; one without the header was
written by an earlier release (format 1: records `length | crc32 | payload`) and is read too. An unreadable line of
`graded.log` is skipped and counted.

Bookkeeping never needs the space it frees: on a full disk, graded marks wait in memory (written as soon as the
disk takes them) while segments whose runs are all graded are deleted. Writes and syncs run on the spool's own
thread, so the event loop never waits on the disk; `append` returns once the request is as durable as `fsync`
asks (`batch`: synced, requests arriving together sharing one sync; `always`: the same, and graded marks synced
too; `never`: handed to the OS).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import mmap
import os
import re
import struct
import threading
import zlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from otelgrade.core.metrics import Metrics
from otelgrade.intake.receivers import Encoding, Signal

log = logging.getLogger(__name__)

Fsync = Literal["batch", "always", "never"]

MAGIC = b"OTGSPOOL"
FORMAT = 2  # the segment format this release writes; it reads 1 (no header) and 2
_SEGMENT_HEADER = struct.Struct(">8sHH")  # magic, format version, reserved
_MARK = b"\xa7OGR"  # starts every record: what replay looks for after damage
_RECORD_HEAD = struct.Struct(">4sII")  # mark, payload length, crc32 of the payload
_HEAD_CRC = struct.Struct(">I")  # crc32 of the record head
_RECORD_HEADER_SIZE = _RECORD_HEAD.size + _HEAD_CRC.size
_FORMAT_1_HEADER = struct.Struct(">II")  # payload length, crc32 of the payload
_SIGNALS: tuple[Signal, ...] = ("traces", "logs")
_ENCODINGS: tuple[Encoding, ...] = ("protobuf", "json")
_GRADED = "graded.log"
_TRACE_ID = re.compile(rb"[0-9a-f]{32}")
DAMAGE = ("corrupt", "torn", "unknown_version", "graded_mark", "journal")  # kinds of otelgrade_spool_damage_total


@dataclass(frozen=True, slots=True)
class Record:
    """One acknowledged export request, as received (after any gzip)."""

    signal: Signal
    encoding: Encoding
    body: bytes

    def encode(self) -> tuple[bytes, bytes]:
        """(record header, payload head); the body follows the head."""
        head = bytes((_SIGNALS.index(self.signal), _ENCODINGS.index(self.encoding)))
        start = _RECORD_HEAD.pack(_MARK, len(head) + len(self.body), zlib.crc32(self.body, zlib.crc32(head)))
        return start + _HEAD_CRC.pack(zlib.crc32(start)), head


class Spool:
    """An open spool directory. `replay`, `hold` and `replayed` run on one thread at start-up, before any
    `append`; `append` runs on the event loop's thread; `graded` may be called from any thread."""

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
        for kind in DAMAGE:  # exported at 0, so that increase() sees the first
            self.metrics.spool_damage.labels(kind)
        self._lock = threading.Lock()
        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otelgrade-spool")
        found = self._segments()
        self._formats = {n: f for n, f in ((n, self._format_of(path)) for n, path in found) if f is not None}
        self._sizes: dict[int, int] = {n: self._path(n).stat().st_size for n in self._formats}
        self._pending: dict[int, set[str]] = {n: set() for n in self._sizes}  # segment -> traces not yet graded
        self._where: dict[str, set[int]] = {}  # trace -> segments holding it, while pending
        self._active: int | None = None  # the segment being appended to
        self._fd = -1
        self._next_segment = max((n for n, _ in found), default=0) + 1  # past refused segments too
        self._requests_refused = 0  # requests refused since the disk last took one
        # graded ids in order; `_first` is the absolute index of `_graded[0]` in the log as ever written
        self._graded, self._graded_bytes = self._read_graded()
        self._graded_set = set(self._graded)
        self._unwritten: list[str] = []  # graded ids not in graded.log yet (the disk refused them)
        self._marks_refused = False
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
        """Every whole record of the segments left by earlier runs, in order, as (segment, record); damaged stretches
        are skipped, logged and counted."""
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
        when the disk refuses it; the first refusal is logged, and the first request taken after them."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._io, self._write, record, trace_ids)
            if self.fsync != "never":
                await self._synced(loop)
        except OSError as exc:
            if not self._requests_refused:
                log.error("spool %s: cannot write (%s); refusing requests until it can", self.directory, exc)
            self._requests_refused += 1
            raise
        if self._requests_refused:
            log.warning("spool %s: writing again, after refusing %d request(s)", self.directory, self._requests_refused)
            self._requests_refused = 0

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
            if used is None or (used > _SEGMENT_HEADER.size and used + size > self.segment_bytes):
                self._rotate()
            assert self._active is not None
            active, good = self._active, self._sizes[self._active]
            try:
                _write_whole(self._fd, (header, head, record.body))
            except OSError:
                self._cut_back(good)
                raise
            self._sizes[active] = good + size
            self._hold(active, trace_ids)
            self._update_size()

    def _cut_back(self, good: int) -> None:
        """After a write the disk refused: cut the active segment back to its last whole record. Should that fail
        too, leave the segment (replay skips the torn end) and start the next one with the next append."""
        try:
            os.ftruncate(self._fd, good)
        except OSError as exc:
            log.warning("spool %s: cannot cut a refused write off (%s); starting a new segment", self.directory, exc)
            self._close_active()

    def _rotate(self) -> None:
        """Close the active segment (kept while traces hold it) and start the next one."""
        old = self._active
        if old is not None:
            if self.fsync != "never":
                os.fsync(self._fd)
            self._close_active()
            if not self._pending[old]:
                self._delete(old)
        number = self._next_segment
        self._next_segment += 1
        path = self._path(number)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_whole(fd, (_SEGMENT_HEADER.pack(MAGIC, FORMAT, 0),))
            if self.fsync != "never":
                _sync_directory(self.directory)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        self._fd, self._active, self._sizes[number], self._pending[number] = fd, number, _SEGMENT_HEADER.size, set()
        self._formats[number] = FORMAT
        self._born[number] = self._first + len(self._graded)

    def _close_active(self) -> None:
        os.close(self._fd)
        self._fd, self._active = -1, None

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
        """These traces are graded: record it (replay skips them) and delete segments nothing holds any more. On a
        full disk the marks wait in memory, and deleting segments makes the room to write them."""
        if not trace_ids:
            return
        with self._lock:
            self._graded.extend(trace_ids)
            self._graded_set.update(trace_ids)
            self._unwritten.extend(trace_ids)
            self._write_marks()
            freed = False
            for trace_id in trace_ids:
                for number in self._where.pop(trace_id, ()):
                    traces = self._pending[number]
                    traces.discard(trace_id)
                    if not traces:
                        if number == self._active:  # the next append starts a new segment
                            self._close_active()
                        self._delete(number)
                        freed = True
            if freed and self._unwritten:
                self._write_marks()
            self._compact()
            self._update_size()

    def _write_marks(self) -> None:
        """Append the marks not written yet to graded.log, whole or not at all (they stay in memory then)."""
        data = "".join(f"{t}\n" for t in self._unwritten).encode()
        try:
            _write_whole(self._graded_fd, (data,))
            if self.fsync == "always":
                os.fsync(self._graded_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):  # else the torn line is skipped when read
                os.ftruncate(self._graded_fd, self._graded_bytes)
            if not self._marks_refused:
                log.warning(
                    "spool %s: cannot write graded marks (%s); they wait in memory until it can (a crash before "
                    "then grades those runs again)",
                    self.directory / _GRADED,
                    exc,
                )
            self._marks_refused = True
            return
        self._graded_bytes += len(data)
        self._unwritten.clear()
        if self._marks_refused:
            log.info("spool %s: graded marks written again", self.directory / _GRADED)
            self._marks_refused = False

    def _hold(self, segment: int, trace_ids: Iterable[str]) -> None:
        for trace_id in trace_ids:
            if trace_id not in self._graded_set:
                self._pending[segment].add(trace_id)
                self._where.setdefault(trace_id, set()).add(segment)

    def _compact(self) -> None:
        """Rewrite graded.log without the ids neither replay nor the decision cache needs: those graded before
        every remaining segment began and before the last `keep_graded`. Skipped while the disk refuses it."""
        if len(self._graded) <= 2 * self.keep_graded:
            return
        end = self._first + len(self._graded)
        keep_from = min([end - self.keep_graded, *self._born.values()])
        if keep_from - self._first < len(self._graded) // 2:
            return  # not worth a rewrite yet
        kept = self._graded[keep_from - self._first :]
        data = "".join(f"{t}\n" for t in kept).encode()
        path, temporary = self.directory / _GRADED, self.directory / (_GRADED + ".new")
        try:
            temporary.write_bytes(data)
            if self.fsync != "never":
                with temporary.open("rb") as file:
                    os.fsync(file.fileno())
            os.replace(temporary, path)
        except OSError:
            temporary.unlink(missing_ok=True)
            return
        os.close(self._graded_fd)
        self._graded_fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._graded, self._graded_set, self._first = kept, set(kept), keep_from
        self._graded_bytes, self._unwritten = len(data), []

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

    def _format_of(self, path: Path) -> int | None:
        """The format version of a segment, or None (logged, counted) for one this release does not read."""
        with path.open("rb") as file:
            header = file.read(_SEGMENT_HEADER.size)
            if not header.startswith(MAGIC[: len(header)]):
                # no header: written by a release before format 2, unless records of format 2 follow a damaged one
                return FORMAT if file.read(len(_MARK)) == _MARK else 1
        if len(header) < _SEGMENT_HEADER.size:
            return FORMAT  # its header cut short: nothing was appended to it
        version: int = _SEGMENT_HEADER.unpack(header)[1]
        if version == FORMAT:
            return FORMAT
        log.error(
            "spool %s: written in format version %d, which this otelgrade does not read (it reads 1 to %d); left as "
            "it is: replay it with the otelgrade release that wrote it, or move it out of the spool",
            path,
            version,
            FORMAT,
        )
        self.metrics.spool_damage.labels("unknown_version").inc()
        return None

    def _delete(self, number: int) -> None:
        self._path(number).unlink(missing_ok=True)
        for table in (self._sizes, self._pending, self._born, self._formats):
            table.pop(number, None)

    def _read_graded(self) -> tuple[list[str], int]:
        """The graded ids in graded.log, and its size once a last line cut short by a crash (a mark that never
        happened) is cut off. Unreadable lines are skipped, logged and counted."""
        path = self.directory / _GRADED
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return [], 0
        except OSError as exc:
            raise OSError(f"cannot read the spool's graded marks {path}: {exc.strerror or exc}") from exc
        *lines, cut_short = data.split(b"\n")
        graded = [line.decode("ascii") for line in lines if _TRACE_ID.fullmatch(line)]
        unreadable = sum(1 for line in lines if line) - len(graded)
        if unreadable:
            log.warning(
                "spool %s: %d unreadable line(s) skipped (a run among them may be graded again)", path, unreadable
            )
            self.metrics.spool_damage.labels("graded_mark").inc(unreadable)
        size = len(data) - len(cut_short)
        if cut_short:
            os.truncate(path, size)
        return graded, size

    def _read_segment(self, number: int) -> Iterator[tuple[int, Record]]:
        path = self._path(number)
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if not size:
                return
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
                old = self._formats[number] == 1
                whole = 0 if old else min(size, _SEGMENT_HEADER.size)  # the end of the last whole record
                for start, end, record in _records_1(view, whole) if old else _records(view, whole):
                    if start > whole:
                        self._damaged(path, whole, start, "corrupt")
                    whole = end
                    yield number, record
        if whole < size:
            self._damaged(path, whole, size, "torn")

    def _damaged(self, path: Path, start: int, end: int, kind: Literal["corrupt", "torn"]) -> None:
        self.metrics.spool_damage.labels(kind).inc()
        if kind == "torn":
            log.warning(
                "spool %s: the %d bytes at offset %d are a write cut short (never acknowledged), skipped",
                path,
                end - start,
                start,
            )
        else:
            log.error(
                "spool %s: %d damaged bytes at offset %d skipped (the requests in them are lost); replaying the "
                "records after them",
                path,
                end - start,
                start,
            )

    def _update_size(self) -> None:
        """Under the lock (or before other threads use the spool): the spool's size gauge."""
        self.metrics.spool_bytes.set(sum(self._sizes.values()))

    def close(self) -> None:
        """Sync and close the files (the spool's thread finishes what it was given first); the active segment
        goes too when every trace in it is graded."""
        self._io.shutdown(wait=True)
        with self._lock:
            if self._unwritten:
                self._write_marks()
            for fd in (self._fd, self._graded_fd):
                if fd >= 0:
                    if self.fsync != "never":
                        with contextlib.suppress(OSError):
                            os.fsync(fd)
                    os.close(fd)
            self._fd = self._graded_fd = -1
            active, self._active = self._active, None
            if active is not None and not self._pending[active]:
                self._delete(active)
            self._update_size()
        os.close(self._lock_fd)


def _records(view: mmap.mmap, start: int) -> Iterator[tuple[int, int, Record]]:
    """(offset, end, record) of every whole record of a format 2 segment from `start`. A record whose header checks
    out but whose payload does not is stepped over whole; after a damaged header, the next record is looked for
    by its mark."""
    at = view.find(_MARK, start)
    while at >= 0:
        body_at = at + _RECORD_HEADER_SIZE
        after = at + 1
        if body_at <= len(view):
            _, length, crc = _RECORD_HEAD.unpack_from(view, at)
            (head_crc,) = _HEAD_CRC.unpack_from(view, at + _RECORD_HEAD.size)
            end = body_at + length
            if zlib.crc32(view[at : at + _RECORD_HEAD.size]) == head_crc and end <= len(view):
                found = _payload(view, body_at, end, crc)
                if found is not None:
                    yield at, end, found
                after = end
        at = view.find(_MARK, after)


def _records_1(view: mmap.mmap, start: int) -> Iterator[tuple[int, int, Record]]:
    """The same for a segment of format 1, whose records have no mark: after damage, every offset is tried."""
    at, size = start, len(view)
    while at + _FORMAT_1_HEADER.size <= size:
        length, crc = _FORMAT_1_HEADER.unpack_from(view, at)
        body_at = at + _FORMAT_1_HEADER.size
        end = body_at + length
        found = _payload(view, body_at, end, crc) if end <= size else None
        if found is None:
            at += 1
            continue
        yield at, end, found
        at = end


def _payload(view: mmap.mmap, start: int, end: int, crc: int) -> Record | None:
    """The record whose payload is `view[start:end]`, or None when it is not one (checksum, signal, encoding)."""
    if end - start < 2 or view[start] >= len(_SIGNALS) or view[start + 1] >= len(_ENCODINGS):
        return None
    body = view[start + 2 : end]
    if zlib.crc32(body, zlib.crc32(view[start : start + 2])) != crc:
        return None
    return Record(_SIGNALS[view[start]], _ENCODINGS[view[start + 1]], body)


def _write_whole(fd: int, parts: Sequence[bytes]) -> None:
    """Append `parts` with one write; a write the disk took only part of raises like one it refused."""
    size = sum(len(part) for part in parts)
    written = os.writev(fd, parts)
    if written != size:
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (wrote {written} of {size} bytes)")


def _sync_directory(directory: Path) -> None:
    """Make a new file's directory entry durable (POSIX needs an fsync of the directory)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def adopt(directory: Path, folders: Sequence[Path], journals: Sequence[str] = ()) -> list[Path]:
    """Move what the spool folders of grading workers that no longer run hold into the spool `directory`, so that
    its replay grades their acknowledged requests: first their graded marks and the lines of the other `journals`
    named (each appended to its own), then each segment under a number past its own. Interrupted, it is done again
    at the next start (a line twice is harmless). A folder another process holds is left as it is. Call it before
    the spool of `directory` is opened. The folders adopted, emptied and removed."""
    adopted: list[Path] = []
    with _locked(directory) as ours:
        if not ours:
            return adopted  # the spool is in use: opening it says so
        for folder in folders:
            with _locked(folder) as held:
                if not held:
                    log.warning("spool %s: in use by another otelgrade process; not adopted", folder)
                    continue
                _adopt_folder(directory, folder, (_GRADED, *journals))
            for name in ("lock", _GRADED, *journals):
                (folder / name).unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # anything else in it stays, with the folder
                folder.rmdir()
            adopted.append(folder)
    return adopted


def _adopt_folder(directory: Path, folder: Path, line_files: Sequence[str]) -> None:
    for name in line_files:
        try:
            data = _whole_lines((folder / name).read_bytes())
        except FileNotFoundError:
            continue
        if not data:
            continue
        ours = directory / name
        with contextlib.suppress(FileNotFoundError):  # its own last line cut short by a crash goes, as read back
            os.truncate(ours, len(_whole_lines(ours.read_bytes())))
        fd = os.open(ours, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _write_whole(fd, (data,))
            os.fsync(fd)
        finally:
            os.close(fd)
    taken = [p.stem.removeprefix("segment-") for p in directory.glob("segment-*.spool")]
    number = max((int(n) for n in taken if n.isdigit()), default=0)
    moved = 0
    for path in sorted(folder.glob("segment-*.spool")):
        number += 1
        os.rename(path, directory / f"segment-{number:012d}.spool")
        moved += 1
    _sync_directory(directory)
    log.warning(
        "spool %s: %d segment(s) of a grading worker that does not run now moved to %s, whose replay grades them",
        folder,
        moved,
        directory,
    )


def _whole_lines(data: bytes) -> bytes:
    """The lines up to the last whole one (a line cut short by a crash was never written)."""
    return data[: data.rfind(b"\n") + 1]


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[bool]:
    """Hold a spool folder's lock while in the block (as a running spool would); whether it could be taken."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
