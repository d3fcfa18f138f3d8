"""JSONL sink: one grade per line, appended (each batch handed to the OS as it comes, synced to disk at least once a
second); rotated by size; what a full disk refuses is held and retried."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.export.sinks import Sink, SinkSettings, sink_type

log = logging.getLogger("otelgrade.export.sinks")

FLUSH_INTERVAL = 0.5  # seconds between background syncs; the first retry of what the disk refused comes this late
MAX_RETRY_SECONDS = 30.0  # the longest wait between retries
# The fields that tell one grade from another (a re-graded run's revisions and a call grader's calls included).
# A line written before a field existed holds its default.
IDENTITY = {"trace_id": None, "span_id": None, "suite": None, "grader": None, "call_span_id": None, "revision": 1}
_TRACE_ID = re.compile(rb'"trace_id":"([0-9a-f]{32})"')


def encode_lines(grades: Sequence[Grade]) -> bytes:
    """Grades -> newline-terminated JSON lines (UTF-8, compact)."""
    return b"".join(
        json.dumps(g.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str).encode() + b"\n" for g in grades
    )


@sink_type("jsonl")
class JsonlSinkSettings(SinkSettings):
    """`{type: jsonl, path: grades.jsonl}`: a relative path is relative to the config file's folder."""

    type: Literal["jsonl"]
    path: str
    max_bytes: int = Field(100 * 1024 * 1024, gt=0)  # rotation size
    backups: int = Field(5, ge=0)

    def build(self, metrics: Metrics) -> Sink:
        return JsonlSink(self.path, metrics, max_bytes=self.max_bytes, backups=self.backups)

    def resolve_paths(self, base_dir: Path) -> SinkSettings:
        if Path(self.path).is_absolute():
            return self
        return self.model_copy(update={"path": str(base_dir / self.path)})


class JsonlSink:
    """Appends grades to `path`; past `max_bytes` it shifts `path` -> `path.1` ... `path.<backups>`.

    Each batch of grades is one write of whole lines: a write the disk refuses (it is full) is cut back off, and the
    batch is held in memory and retried, with backoff, in order before anything newer; `unwritten` names the runs
    whose grades are held, so that a spool keeps them until they are written. Past `max_held_bytes` the oldest
    held grades are dropped, and their runs stay unwritten (the spool grades them again at the next start)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        metrics: Metrics,
        *,
        max_bytes: int = 100 * 1024 * 1024,
        backups: int = 5,
        flush_interval: float = FLUSH_INTERVAL,
        max_held_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.path = Path(path)
        self.max_bytes, self.backups, self.max_held_bytes = max_bytes, backups, max_held_bytes
        self._errors = metrics.sink_errors.labels("jsonl")
        self._lock = threading.Lock()
        self._fd = -1
        self._size = 0
        self._dirty = False  # written since the last fsync
        self._held: set[tuple[Any, ...]] = set()  # grades the files hold already, not to write again (spool replay)
        self._waiting: deque[tuple[bytes, frozenset[str]]] = deque()  # batches the disk refused, oldest first
        self._waiting_bytes = 0
        self._dropped: set[str] = set()  # runs whose held grades were dropped past `max_held_bytes`
        self._held_grades = 0  # grades held since the sink last wrote all it was given
        self._retry_at = 0.0
        self._backoff = flush_interval
        self._flush_interval = flush_interval
        self._closed = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_every, args=(flush_interval,), name="otelgrade-jsonl-flush", daemon=True
        )
        self._flusher.start()

    # --- Sink protocol

    def write(self, grades: Sequence[Grade]) -> None:
        if self._held:
            grades = self._not_held(grades)
        if not grades:
            return
        try:
            data = encode_lines(grades)
        except (TypeError, ValueError) as exc:  # a grade carrying something JSON cannot hold: never writable
            self._errors.inc(len(grades))
            log.error("jsonl sink %s: %d grade(s) cannot be written as JSON: %s", self.path, len(grades), exc)
            return
        with self._lock:
            if self._closed.is_set():
                self._errors.inc(len(grades))
                return
            batch = (data, frozenset(g.trace_id for g in grades))
            self._waiting.append(batch)
            self._waiting_bytes += len(data)
            if len(self._waiting) == 1:  # nothing older waits for the disk
                self._write_waiting()
            if self._waiting and self._waiting[-1] is batch:  # held, to be retried
                self._errors.inc(len(grades))
                self._held_grades += len(grades)
                self._drop_oldest()

    def flush(self) -> None:
        """Retry what the disk refused (when its backoff is over); ask the OS to put what was written on disk."""
        with self._lock:
            if self._waiting and time.monotonic() >= self._retry_at:
                self._write_waiting()
            fd = os.dup(self._fd) if self._dirty and self._fd >= 0 else -1
            self._dirty = False
        if fd >= 0:
            try:
                os.fsync(fd)
            except OSError:
                pass  # a filesystem without fsync; the data is with the OS already
            finally:
                os.close(fd)

    def close(self) -> None:
        with self._lock:
            self._retry_at = 0.0  # one last try
        self.flush()
        with self._lock:
            self._closed.set()
            if self._waiting:
                log.error(
                    "jsonl sink %s: closed with %d batch(es) of grades the disk refused; a spool grades their runs "
                    "again at the next start",
                    self.path,
                    len(self._waiting),
                )
            self._close_file()
        if threading.current_thread() is not self._flusher:
            self._flusher.join(timeout=2)

    def unwritten(self) -> set[str]:
        """The runs some of whose grades this sink took but has not written."""
        with self._lock:
            return self._dropped.union(*(traces for _, traces in self._waiting))

    def skip_held(self, trace_ids: Collection[str]) -> int:
        """Read back the file and its backups for grades of `trace_ids`; those are not written again."""
        wanted = set(trace_ids)
        held: set[tuple[Any, ...]] = set()
        for path in [self.path, *(self._backup(i) for i in range(1, self.backups + 1))]:
            with contextlib.suppress(OSError), path.open("rb") as lines:
                for line in lines:
                    found = _TRACE_ID.search(line)
                    if found is None or found.group(1).decode() not in wanted:
                        continue
                    with contextlib.suppress(ValueError):
                        written = json.loads(line)
                        held.add(tuple(written.get(key, default) for key, default in IDENTITY.items()))
        with self._lock:
            self._held |= held
        return len(held)

    def _not_held(self, grades: Sequence[Grade]) -> list[Grade]:
        with self._lock:
            out = []
            for grade in grades:
                identity = tuple(getattr(grade, key) for key in IDENTITY)
                if identity in self._held:
                    self._held.discard(identity)
                else:
                    out.append(grade)
            return out

    # --- internals (called with the lock held)

    def _write_waiting(self) -> None:
        """Write the waiting batches in order, until the disk refuses one (it stays, with the rest, for a retry)."""
        while self._waiting:
            data, _ = self._waiting[0]
            try:
                self._append(data)
            except OSError as exc:
                if not self._held_grades:
                    log.error("jsonl sink %s: cannot write grades (%s); holding them to retry", self.path, exc)
                self._retry_at = time.monotonic() + self._backoff
                self._backoff = min(self._backoff * 2, MAX_RETRY_SECONDS)
                return
            self._waiting.popleft()
            self._waiting_bytes -= len(data)
        if self._held_grades:
            log.warning("jsonl sink %s: writing again, after holding %d grade(s)", self.path, self._held_grades)
        self._held_grades, self._backoff = 0, self._flush_interval

    def _drop_oldest(self) -> None:
        while self._waiting_bytes > self.max_held_bytes and len(self._waiting) > 1:
            data, traces = self._waiting.popleft()
            self._waiting_bytes -= len(data)
            if not self._dropped:
                log.error(
                    "jsonl sink %s: more than %d bytes of grades held; dropping the oldest (a spool grades their "
                    "runs again at the next start)",
                    self.path,
                    self.max_held_bytes,
                )
            self._dropped |= traces

    def _append(self, data: bytes) -> None:
        """One write of whole lines; one the disk took only part of is cut back off, and raises. Several processes
        (grading workers) may append to one file: each write holds the file's lock, and the size is the file's, so
        cutting a failed write back off never cuts another process's lines, and a file another process rotated is
        followed."""
        if self._fd < 0 or self._rotated_elsewhere():
            self._close_file()
            self._open()
        with _locked(self._fd):
            self._size = os.fstat(self._fd).st_size
            if self._size and self._size + len(data) > self.max_bytes:
                self._rotate()
            try:
                written = os.write(self._fd, data)
                if written != len(data):
                    raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (wrote {written} of {len(data)} bytes)")
            except OSError:
                try:
                    os.ftruncate(self._fd, self._size)
                except OSError:
                    self._close_file()  # reopening cuts the line short off
                raise
        self._size += len(data)
        self._dirty = True

    def _rotated_elsewhere(self) -> bool:
        """Whether the file this sink appends to is no longer at its path (another process rotated it)."""
        try:
            return os.stat(self.path).st_ino != os.fstat(self._fd).st_ino
        except OSError:
            return True

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        with _locked(self._fd):
            _cut_partial_line(self.path)
        self._size = os.fstat(self._fd).st_size

    def _rotate(self) -> None:
        self._close_file()
        if self.backups == 0:
            self.path.unlink(missing_ok=True)
        else:
            for i in range(self.backups - 1, 0, -1):
                older = self._backup(i)
                if older.exists():
                    older.replace(self._backup(i + 1))
            self.path.replace(self._backup(1))
        self._open()

    def _backup(self, i: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{i}")

    def _close_file(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        self._dirty = False

    def _flush_every(self, interval: float) -> None:
        while not self._closed.wait(interval):
            self.flush()


@contextlib.contextmanager
def _locked(fd: int) -> Iterator[None]:
    """The file's exclusive lock (`flock`) for the block: the processes appending to it take turns."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # a rotation closed it, which let the lock go
            fcntl.flock(fd, fcntl.LOCK_UN)


def _cut_partial_line(path: Path) -> None:
    """Remove what a killed process left of a line it was writing: appended to, it would run into the next one."""
    with contextlib.suppress(FileNotFoundError), path.open("rb+") as file:
        end = file.seek(0, os.SEEK_END)
        if not end:
            return
        file.seek(max(0, end - 65536))
        tail = file.read()
        if tail.endswith(b"\n"):
            return
        cut = tail.rfind(b"\n")
        if cut < 0 and end > len(tail):
            return  # one line longer than the tail read: leave the file as it is
        file.truncate(end - len(tail) + cut + 1)
