"""The traffic archive, opt-in: the received OTLP of graded runs, kept in files `otelgrade grade` reads, so a changed
grader can be tried on real traffic (`otelgrade grade --config new.yaml ARCHIVE_DIR`, `--compare`).

`{type: archive, path: DIR, keep: all | failing | sample}`. A trace is kept once a grade (`all`, `sample`) or a
`fail` (`failing`) says so. The server hands each trace over once graded: its code graders' verdicts are in by
then; a trace still waiting for verdicts (a judge's, a conversation's) is held until they come, within
`hold_bytes` (oldest out first), and a verdict that comes after its trace left the hold is counted
(`otelgrade_archive_traces_total{result="missed"}`); any other trace is let go at once. `sample` keeps a share of
traces chosen by trace id, the same on every replica. A trace no suite grades is not kept.

Each trace is appended as one gzip member holding one OTLP ExportTraceServiceRequest (its GenAI log records, if
any, go to the matching `.logs.pb.gz` file): the spans' bytes as received, framed without decoding them again. A
file is closed past `file_bytes` or `file_age`; the oldest files are deleted past `max_bytes` in all and once older
than `max_age`, except those a writer still has open: several processes (grading workers) may share one directory,
each writing files of its own and holding a shared lock on the ones it is writing, which are never deleted.
The archive holds whatever the traces carry (prompts, answers, tool arguments, user data): treat the directory as
the traces themselves.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage
from opentelemetry.proto.trace.v1.trace_pb2 import Status
from pydantic import ByteSize, Field

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.settings import Bytes, Duration
from otelgrade.core.spans import AnySpan, LogEvent, ReceivedSpan, Span
from otelgrade.export.sinks import Sink, SinkSettings, sink_type
from otelgrade.grade.judges.sampling import is_sampled
from otelgrade.rebuild.dialects import EVENT_LOGGERS

log = logging.getLogger("otelgrade.export.sinks")

Keep = Literal["all", "failing", "sample"]
PREFIX = "traces-"
COMPRESS_LEVEL = 1  # about 8x smaller than the spans on captured traces, at a fraction of level 6's CPU
REMEMBERED = 10_000  # archived trace ids kept, to append only the new spans of a re-graded trace
_SCOPE_OF_EVENT = {name: scope for scope, name in EVENT_LOGGERS.items()}


@sink_type("archive")
class ArchiveSinkSettings(SinkSettings):
    """`{type: archive, path: archive/}`: a relative path is relative to the config file's folder."""

    type: Literal["archive"]
    path: str
    keep: Keep = "all"
    sample: float = Field(0.1, gt=0.0, le=1.0)  # with `keep: sample`, the share of traces kept
    max_bytes: Bytes = ByteSize(1024**3)  # all files together (compressed)
    max_age: Duration = Field(7 * 86400.0, gt=0)
    file_bytes: Bytes = ByteSize(64 * 1024**2)
    file_age: Duration = Field(3600.0, gt=0)
    hold_bytes: Bytes = ByteSize(64 * 1024**2)  # graded traces held while a judge's or conversation's verdict comes

    def build(self, metrics: Metrics) -> Sink:
        return ArchiveSink(self, metrics)

    def resolve_paths(self, base_dir: Path) -> SinkSettings:
        if Path(self.path).is_absolute():
            return self
        return self.model_copy(update={"path": str(base_dir / self.path)})


class ArchiveSink:
    """Keeps graded traces' OTLP: `write` sees the grades, `keep_trace` the trace once it is graded."""

    def __init__(self, settings: ArchiveSinkSettings, metrics: Metrics, clock: Any = time.time) -> None:
        self.settings = settings
        self.directory = Path(settings.path)
        self.clock = clock
        self._lock = threading.Lock()
        self._traces = metrics.archive_traces
        self._bytes = metrics.archive_bytes
        self._errors = metrics.sink_errors.labels("archive")
        self._held: OrderedDict[str, tuple[Sequence[AnySpan], Sequence[LogEvent], int]] = OrderedDict()
        self._held_bytes = 0
        self._qualified: OrderedDict[str, bool] = OrderedDict()  # grades said keep before the trace came
        self._evicted: OrderedDict[str, bool] = OrderedDict()  # left the hold with no verdict to keep it
        self._written: OrderedDict[str, tuple[int, int]] = OrderedDict()  # trace id -> spans, logs archived
        self._file: Path | None = None
        self._writing: dict[Path, int] = {}  # the current files (spans, logs) -> a descriptor holding a shared lock
        self._opened = 0.0
        self._sequence = 0
        self._checked = 0.0
        self._logged = -60.0
        self.directory.mkdir(parents=True, exist_ok=True)
        self._total = sum(size for _, size in self._files())
        self._bound()  # what aged past max_age while the service was down goes now

    # --- what the server calls ---------------------------------------------------------------------------

    def keep_trace(
        self, trace_id: str, spans: Sequence[AnySpan], logs: Sequence[LogEvent], waiting: bool = True
    ) -> None:
        """A trace just graded (again, with more spans, after late ones arrived): archived if its grades said so,
        else held while verdicts are still `waiting` (a judge's, a conversation's)."""
        settings = self.settings
        if settings.keep == "sample" and not is_sampled(trace_id, "archive", settings.sample):
            return
        try:
            with self._lock:
                if trace_id in self._written or self._qualified.pop(trace_id, False):
                    self._archive(trace_id, spans, logs)  # a re-graded trace's late spans join it
                elif waiting:
                    self._hold(trace_id, spans, logs)
        except Exception as exc:
            self._failed(exc, f"cannot archive trace {trace_id}")

    def write(self, grades: Sequence[Grade]) -> None:
        """Archive the traces these grades make worth keeping: any grade, or with `keep: failing` a `fail`."""
        failing = self.settings.keep == "failing"
        try:
            with self._lock:
                for trace_id in dict.fromkeys(g.trace_id for g in grades if g.outcome == "fail" or not failing):
                    held = self._held.pop(trace_id, None)
                    if held is not None:
                        self._held_bytes -= held[2]
                        self._archive(trace_id, held[0], held[1])
                    elif self._evicted.pop(trace_id, False):
                        self._traces.labels("missed").inc()  # its verdict came after it left the hold
                    elif trace_id not in self._written:  # graded, its trace not handed over yet
                        _remember(self._qualified, trace_id)
        except Exception as exc:
            self._failed(exc, "cannot archive traces")

    def _failed(self, exc: Exception, what: str) -> None:
        """Count a trace not archived (a full disk, a removed directory); say why at most once a minute."""
        self._errors.inc()
        self._traces.labels("write_error").inc()
        now = self.clock()
        if now - self._logged >= 60.0:
            self._logged = now
            log.error(
                'archive %s: %s: %s (counted in otelgrade_archive_traces_total{result="write_error"})',
                self.directory,
                what,
                exc,
            )

    def flush(self) -> None:
        return None

    def close(self) -> None:
        with self._lock:
            self._held.clear()
            self._held_bytes = 0
            self._let_go()

    # --- inside ------------------------------------------------------------------------------------------

    def _hold(self, trace_id: str, spans: Sequence[AnySpan], logs: Sequence[LogEvent]) -> None:
        size = sum(len(s.message) if isinstance(s, ReceivedSpan) else 512 for s in spans) + 512 * len(logs)
        previous = self._held.pop(trace_id, None)
        if previous is not None:
            self._held_bytes -= previous[2]
        self._held[trace_id] = (spans, logs, size)
        self._held_bytes += size
        while self._held_bytes > self.settings.hold_bytes and len(self._held) > 1:
            evicted, (_, _, dropped) = self._held.popitem(last=False)
            self._held_bytes -= dropped
            _remember(self._evicted, evicted)

    def _archive(self, trace_id: str, spans: Sequence[AnySpan], logs: Sequence[LogEvent]) -> None:
        """Append the spans and logs of the trace not archived yet (all of them, the first time)."""
        done_spans, done_logs = self._written.pop(trace_id, (0, 0))
        new_spans, new_logs = spans[done_spans:], logs[done_logs:]
        path = self._current()
        if new_spans:
            self._append(path, gzip.compress(traces_request(new_spans), mtime=0, compresslevel=COMPRESS_LEVEL))
        if new_logs:
            logs_path = path.with_name(path.name.replace(".pb.gz", ".logs.pb.gz"))
            self._append(logs_path, gzip.compress(logs_request(new_logs), mtime=0, compresslevel=COMPRESS_LEVEL))
        self._written[trace_id] = (len(spans), len(logs))
        while len(self._written) > REMEMBERED:
            self._written.popitem(last=False)
        self._evicted.pop(trace_id, None)
        self._traces.labels("written").inc()
        self._bound()

    def _append(self, path: Path, member: bytes) -> None:
        """Append one gzip member whole, or nothing: what a full disk took of it is cut back off, so the file stays
        a valid gzip file."""
        fd = self._writing.get(path)
        if fd is None:
            fd = self._writing[path] = _open_locked(path)
        try:
            before = os.fstat(fd).st_size
            try:
                view = memoryview(member)
                while view:
                    view = view[os.write(fd, view) :]
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before)
                raise
        except OSError:
            os.close(self._writing.pop(path))  # opened again, and locked again, by the next write
            raise
        self._total += len(member)
        self._bytes.set(self._total)

    def _current(self) -> Path:
        now = self.clock()
        file = self._file
        if file is None or now - self._opened >= self.settings.file_age or _size(file) >= self.settings.file_bytes:
            self._sequence += 1
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
            file = self._file = self.directory / f"{PREFIX}{stamp}-{os.getpid()}-{self._sequence:04d}.pb.gz"
            self._opened = now
            self._let_go()
        return file

    def _let_go(self) -> None:
        """Close the files written so far, so they may be deleted."""
        for fd in self._writing.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._writing.clear()

    def _files(self) -> list[tuple[Path, int]]:
        """The archive's files, oldest first, with their sizes."""
        found = []
        for path in self.directory.glob(f"{PREFIX}*.pb.gz"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                found.append((stat.st_mtime, path, stat.st_size))
        return [(path, size) for _, path, size in sorted(found)]

    def _bound(self) -> None:
        """Delete the oldest files past `max_bytes`, and files older than `max_age` (checked once a minute)."""
        now = self.clock()
        if self._total <= self.settings.max_bytes and now - self._checked < 60.0:
            return
        self._checked = now
        files = self._files()
        total = sum(size for _, size in files)
        for path, size in files:
            if path == self._file or path.name.replace(".logs.pb.gz", ".pb.gz") == getattr(self._file, "name", None):
                continue
            too_old = _mtime(path) < now - self.settings.max_age
            if not too_old and total <= self.settings.max_bytes:
                continue
            if not _delete_unless_written(path):
                continue  # another process's current file
            total -= size
            self._traces.labels("deleted_files").inc()
        self._total = total
        self._bytes.set(total)


def _remember(ids: OrderedDict[str, bool], trace_id: str) -> None:
    """Add to a bounded set of trace ids, the oldest out first."""
    ids[trace_id] = True
    while len(ids) > REMEMBERED:
        ids.popitem(last=False)


def _open_locked(path: Path) -> int:
    """A descriptor appending to `path`, holding a shared lock on it (a file deleted meanwhile is created again)."""
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # the content of traces: owner only
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _delete_unless_written(path: Path) -> bool:
    """Delete a file unless a writer holds it open (any process's current file); whether it is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True
    finally:
        os.close(fd)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


# --- OTLP framing: requests made of the spans' bytes as received ---------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _head(number: int, length: int) -> bytes:
    """The tag and length that start a length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(length)


def _request(groups: Iterable[tuple[dict[str, Any], bytes, list[bytes]]]) -> bytes:
    """An export request (traces or logs: the same shape) of (resource, scope message, items) groups, the items'
    bytes framed as they are: resources (field 1) -> resource (1) and scope container (2) -> scope (1), items (2)."""
    out: list[bytes] = []
    for resource, scope, items in groups:
        inner = [_head(1, len(scope)), scope]
        for item in items:
            inner += (_head(2, len(item)), item)
        inner_length = sum(map(len, inner))
        resource_bytes = Resource(attributes=key_values(resource)).SerializeToString()
        outer = [_head(1, len(resource_bytes)), resource_bytes, _head(2, inner_length)]
        out += (_head(1, sum(map(len, outer)) + inner_length), *outer, *inner)
    return b"".join(out)


def traces_request(spans: Sequence[AnySpan]) -> bytes:
    """An ExportTraceServiceRequest of these spans, one ResourceSpans per resource and scope (spans as received are
    framed, not decoded; read spans are encoded)."""
    groups: dict[tuple[int, str, str], tuple[dict[str, Any], bytes, list[bytes]]] = {}
    for span in spans:
        key = (id(span.resource), span.scope, span.scope_version)
        group = groups.get(key)
        if group is None:
            scope = InstrumentationScope(name=span.scope, version=span.scope_version).SerializeToString()
            group = groups[key] = (span.resource, scope, [])
        group[2].append(span.message if isinstance(span, ReceivedSpan) else _span_message(span))
    return _request(groups.values())


def logs_request(events: Sequence[LogEvent]) -> bytes:
    """An ExportLogsServiceRequest of these GenAI log events."""
    groups: dict[tuple[int, str], tuple[dict[str, Any], bytes, list[bytes]]] = {}
    for event in events:
        scope_name = _SCOPE_OF_EVENT.get(event.event.name, "")
        record = LogRecord(
            time_unix_nano=event.event.time_ns,
            event_name=event.event.name,
            attributes=key_values(event.event.attributes),
            trace_id=bytes.fromhex(event.trace_id),
            span_id=bytes.fromhex(event.span_id),
        )
        if event.event.body is not None:
            record.body.CopyFrom(any_value(event.event.body))
        key = (id(event.resource), scope_name)
        group = groups.get(key)
        if group is None:
            group = groups[key] = (event.resource, InstrumentationScope(name=scope_name).SerializeToString(), [])
        group[2].append(record.SerializeToString())
    return _request(groups.values())


def _span_message(span: Span) -> bytes:
    message = SpanMessage(
        trace_id=bytes.fromhex(span.trace_id),
        span_id=bytes.fromhex(span.span_id),
        parent_span_id=bytes.fromhex(span.parent_id) if span.parent_id else b"",
        name=span.name,
        kind=span.kind,  # type: ignore[arg-type]
        start_time_unix_nano=span.start_ns,
        end_time_unix_nano=span.end_ns,
        status=Status(code=span.status_code, message=span.status_message),  # type: ignore[arg-type]
        attributes=key_values(span.attributes),
        events=[
            SpanMessage.Event(name=e.name, time_unix_nano=e.time_ns, attributes=key_values(e.attributes))
            for e in span.events
        ],
    )
    return bytes(message.SerializeToString())


def key_values(values: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=key, value=any_value(value)) for key, value in values.items()]


def any_value(value: Any) -> AnyValue:
    """A plain value (as `spans.any_value` reads one) as an OTLP AnyValue."""
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list | tuple):
        out = AnyValue()
        out.array_value.values.extend(any_value(item) for item in value)
        return out
    if isinstance(value, dict):
        out = AnyValue()
        out.kvlist_value.values.extend(key_values(value))
        return out
    return AnyValue() if value is None else AnyValue(string_value=str(value))
