"""JSONL sink: one grade per line, appended; flushed to the OS at least once a second; rotated by size."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import Field

from otelgrade.metrics import Metrics
from otelgrade.results import Grade
from otelgrade.sinks import Sink, SinkSettings, sink_type
from otelgrade.sinks._burst import ErrorBurst

FLUSH_INTERVAL = 0.5  # seconds between background flushes; a crash loses at most this much (< 1 s)
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
    """Appends grades to `path`; past `max_bytes` it shifts `path` -> `path.1` ... `path.<backups>`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        metrics: Metrics,
        *,
        max_bytes: int = 100 * 1024 * 1024,
        backups: int = 5,
        flush_interval: float = FLUSH_INTERVAL,
    ) -> None:
        self.path = Path(path)
        self.max_bytes, self.backups = max_bytes, backups
        self._errors = ErrorBurst("jsonl", metrics)
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None
        self._size = 0
        self._dirty = False
        self._pending = 0  # grades written since the last successful flush
        self._held: set[tuple[Any, ...]] = set()  # grades the files hold already, not to write again (spool replay)
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
        except (TypeError, ValueError) as exc:  # a grade carrying something JSON cannot hold
            self._errors.failed(len(grades), exc)
            return
        with self._lock:
            if self._closed.is_set():
                self._errors.failed(len(grades), "sink is closed")
                return
            try:
                if self._file is None:
                    self._open()
                if self._size and self._size + len(data) > self.max_bytes:
                    self._rotate()
                assert self._file is not None
                self._file.write(data)
                self._size += len(data)
                self._dirty = True
                self._pending += len(grades)
            except OSError as exc:
                self._drop_file()
                self._errors.failed(len(grades), exc)
                return
        self._errors.succeeded()

    def flush(self) -> None:
        """Hand buffered lines to the OS and ask it to put them on disk."""
        with self._lock:
            fd = self._flush_locked()
        if fd is not None:
            try:
                os.fsync(fd)
            except OSError:
                pass  # a filesystem without fsync; the data is with the OS already
            finally:
                os.close(fd)

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._closed.set()
            self._drop_file()
        if threading.current_thread() is not self._flusher:
            self._flusher.join(timeout=2)

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

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _cut_partial_line(self.path)
        self._file = open(self.path, "ab")  # noqa: SIM115 - held open across writes
        self._size = self._file.tell()

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.close()
        self._file = None
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

    def _flush_locked(self) -> int | None:
        """Flush Python's buffer; return a dup of the fd to fsync outside the lock (None if nothing to do)."""
        if self._file is None or not self._dirty:
            return None
        try:
            self._file.flush()
            self._dirty, self._pending = False, 0
            return os.dup(self._file.fileno())
        except OSError as exc:
            lost, self._pending = self._pending, 0
            self._drop_file()
            self._errors.failed(lost, exc)
            return None

    def _drop_file(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        self._dirty = False

    def _flush_every(self, interval: float) -> None:
        while not self._closed.wait(interval):
            self.flush()


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
