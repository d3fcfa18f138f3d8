"""JSONL sink: one grade per line, appended; flushed to the OS at least once a second; rotated by size."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, Literal

from pydantic import Field

from otelgrade.metrics import Metrics
from otelgrade.results import Grade
from otelgrade.sinks import Sink, SinkSettings, sink_type
from otelgrade.sinks._burst import ErrorBurst

FLUSH_INTERVAL = 0.5  # seconds between background flushes; a crash loses at most this much (< 1 s)


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
        self._closed = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_every, args=(flush_interval,), name="otelgrade-jsonl-flush", daemon=True
        )
        self._flusher.start()

    # --- Sink protocol

    def write(self, grades: Sequence[Grade]) -> None:
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

    # --- internals (called with the lock held)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
