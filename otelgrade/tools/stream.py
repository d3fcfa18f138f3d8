"""Read inputs one trace at a time, for a backfill of the traffic archive (`otelgrade grade --since`): memory is one
trace's spans and an index of where each trace is, not the archive.

A first pass reads each file (each gzip member of an archive file: one trace, or a re-graded trace's late spans)
and notes which traces it holds; a second reads, for one trace after another, the pieces that hold it, and
rebuilds it. A damaged piece (gzip data that does not inflate or fails its check, bytes that are not an export
request) is skipped, the reading going on at the next gzip member; the file is named in `Damage`, never fatal. A
last member cut short (the file being written, or a write a crash stopped) is left out with a warning, as before.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from otelgrade.core.errors import InputError
from otelgrade.core.spans import AnySpan, LogEvent
from otelgrade.core.trajectory import Trajectory
from otelgrade.tools.offline import Collected, RebuildTrace, input_files, read_body

log = logging.getLogger("otelgrade")

GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 16  # inflated a slice at a time: a member's end is found without copying the rest of the file


@dataclass
class Damage:
    """The files some of whose content could not be read, with what was wrong."""

    files: dict[Path, list[str]] = field(default_factory=dict)

    def add(self, path: Path, problem: str) -> None:
        self.files.setdefault(path, []).append(problem)

    def report(self) -> str:
        """One line per damaged file: its name, how many pieces were skipped, the first problem."""
        return "\n".join(
            f"  {path}: {len(problems)} damaged part(s) skipped ({problems[0]})"
            for path, problems in self.files.items()
        )


@dataclass(frozen=True, slots=True)
class _Piece:
    """Where one part of the input is: a whole file, or one gzip member of it (`start`..`end` of its bytes)."""

    path: Path
    explicit: bool
    start: int = 0
    end: int = -1  # -1: the whole file, as it is
    gzipped: bool = False

    @property
    def name(self) -> Path:
        """What the content is read as: the file's name without `.gz`."""
        return self.path.with_suffix("") if self.path.suffix == ".gz" else self.path


def stream_runs(
    paths: Sequence[str | Path], rebuild: RebuildTrace, damage: Damage, modified_after: float | None = None
) -> Iterator[Trajectory]:
    """The runs in the files as `offline.read_runs` finds them, one trace held at a time. Damaged parts are skipped
    and noted in `damage`; an input that does not exist still raises `InputError`."""
    pieces: list[_Piece] = []
    where: dict[str, list[int]] = {}  # trace id -> the pieces holding its spans or log events, in order
    for path, explicit in input_files(paths, modified_after):
        for piece, content in _pieces(path, explicit, damage):
            read = _decoded(piece, content, damage)
            if read is None:
                continue
            yield from read.trajectories
            number = len(pieces)
            pieces.append(piece)
            for trace_id in dict.fromkeys([*read.spans, *read.logs]):
                where.setdefault(trace_id, []).append(number)
    last: tuple[int, Collected] | None = None  # the piece read last: the next trace is often in it too
    for trace_id, numbers in where.items():
        spans: list[AnySpan] = []
        logs: list[LogEvent] = []
        for number in numbers:
            if last is None or last[0] != number:
                piece = pieces[number]
                read = _decoded(piece, _content(piece), damage)
                last = (number, read if read is not None else Collected())
            spans.extend(last[1].spans.get(trace_id, ()))
            logs.extend(last[1].logs.get(trace_id, ()))
        if spans or logs:
            yield from rebuild(spans, logs)


def _pieces(path: Path, explicit: bool, damage: Damage) -> Iterator[tuple[_Piece, bytes]]:
    """A file's parts and their content (inflated): each gzip member of a gzip file, else the whole file."""
    try:
        body = path.read_bytes()
    except OSError as exc:
        damage.add(path, f"cannot read: {exc.strerror or exc}")
        return
    if not (path.suffix == ".gz" or body[:2] == b"\x1f\x8b"):
        yield _Piece(path, explicit), body
        return
    start = 0
    while start < len(body):
        try:
            end, content = _member(body, start)
        except zlib.error as exc:
            damage.add(path, f"damaged gzip data at byte {start}: {exc}")
            start = body.find(GZIP_MAGIC, start + 1)
            if start < 0:
                return
            continue
        if end is None:  # a file being written, or a write a crash stopped: what precedes is whole
            log.warning("%s: the last gzip member is cut short (a write stopped midway); read what precedes it", path)
            return
        yield _Piece(path, explicit, start, end, gzipped=True), content
        start = end


def _member(body: bytes, start: int) -> tuple[int | None, bytes]:
    """The gzip member at `start`: where it ends (None: cut short) and its content."""
    view = memoryview(body)
    member = zlib.decompressobj(wbits=31)
    parts, position = [], start
    while not member.eof and position < len(body):
        parts.append(member.decompress(view[position : position + _CHUNK]))
        position = min(position + _CHUNK, len(body))
    if not member.eof:
        return None, b""
    return position - len(member.unused_data), b"".join(parts)


def _content(piece: _Piece) -> bytes:
    """A piece's content read again (the second pass)."""
    with piece.path.open("rb") as file:
        if piece.end < 0:
            return file.read()
        file.seek(piece.start)
        return zlib.decompress(file.read(piece.end - piece.start), wbits=31)


def _decoded(piece: _Piece, content: bytes, damage: Damage) -> Collected | None:
    """A piece's spans, log events and trajectories; None when it does not read (noted in `damage`)."""
    read = Collected()
    try:
        read_body(piece.name, content, piece.explicit, read)
    except InputError as exc:
        damage.add(piece.path, f"at byte {piece.start}: {exc}" if piece.gzipped else str(exc))
        return None
    return read
