"""A damaged spool loses only what is damaged: `otelgrade serve` killed with SIGKILL holding 200 acknowledged
runs, its spool damaged on disk, replays every record that is still whole at the next start, refuses a segment
written in a format it does not know (and leaves it as it is), and reads past a bad line of its graded marks."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

from tests.conftest import ServeProcess, spool_of
from tests.intake.test_spool_durability import make_runs, send

Serve = Callable[..., ServeProcess]
HOLD = {"assembly": {"settle": "60s", "idle_timeout": "120s"}}  # nothing settles before the kill


def killed_with_runs(serve: Serve, spool: Path, count: int) -> tuple[list[str], Path]:
    """Start a server with this spool, have `count` runs acknowledged (one request each, in order) and kill it
    with SIGKILL before any is graded: (their trace ids, the segment holding those worker 0 owns; with one
    worker, all)."""
    first = serve({"durability": {"spool_dir": str(spool)}, **HOLD})
    exporter = HttpSpanExporter(endpoint=f"{first.http_url}/v1/traces", timeout=5)
    acknowledged: list[str] = []
    send(exporter, make_runs(count), acknowledged)
    exporter.shutdown()
    first.kill()
    assert len(acknowledged) == count
    (segment,) = spool.glob("segment-*.spool")
    return acknowledged, segment


def segment_of(spool: Path, trace_id: str) -> Path:
    """The segment holding a trace's request: in the spool folder of the grading worker owning the trace."""
    (segment,) = spool_of(spool, trace_id).glob("segment-*.spool")
    return segment


def next_with_same_owner(spool: Path, acknowledged: list[str], index: int) -> int:
    """The index of the next run after `index` whose request went to the same spool folder (with one worker:
    the next run)."""
    folder = spool_of(spool, acknowledged[index])
    return next(i for i in range(index + 1, len(acknowledged)) if spool_of(spool, acknowledged[i]) == folder)


def graded_after_restart(serve: Serve, spool: Path) -> tuple[set[str], ServeProcess]:
    """Start again on the spool, let every replayed run settle and be graded: the trace ids graded."""
    second = serve({"durability": {"spool_dir": str(spool)}})
    second.wait_for_metric("otelgrade_traces_in_flight", None, lambda held: held == 0, timeout=15)
    second.wait_for_metric("otelgrade_grading_backlog", None, lambda backlog: backlog == 0, timeout=15)
    time.sleep(0.5)  # the JSONL sink writes within half a second
    return {grade["trace_id"] for grade in second.grades()}, second


def damage(segment: Path, start: int, end: int) -> None:
    data = bytearray(segment.read_bytes())
    data[start:end] = bytes(b ^ 0xFF for b in data[start:end])
    segment.write_bytes(bytes(data))


def where(segment: Path, trace_id: str) -> int:
    """The offset of the first copy of a trace id (its 16 raw bytes, as OTLP protobuf carries it)."""
    offset = segment.read_bytes().find(bytes.fromhex(trace_id))
    assert offset > 0
    return offset


def damage_count(server: ServeProcess, kind: str) -> float:
    return server.metric("otelgrade_spool_damage_total", {"kind": kind})


def test_a_flipped_byte_loses_that_request_only(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    acknowledged, _ = killed_with_runs(serve, spool, 200)
    segment = segment_of(spool, acknowledged[20])
    at = where(segment, acknowledged[20])
    damage(segment, at, at + 1)  # one byte of the 21st request's body

    graded, second = graded_after_restart(serve, spool)
    assert len(graded) == 199, f"{len(graded)} of 200 acknowledged runs replayed"
    assert graded == set(acknowledged) - {acknowledged[20]}
    assert damage_count(second, "corrupt") == 1
    (line,) = [line for line in second.log().splitlines() if "damaged" in line]
    assert segment.name in line and "offset" in line


def test_damage_across_two_records_loses_those_two_only(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    acknowledged, _ = killed_with_runs(serve, spool, 200)
    segment, following = segment_of(spool, acknowledged[20]), next_with_same_owner(spool, acknowledged, 20)
    # from inside the 21st request to inside the next one in its segment: that one's record header included
    damage(segment, where(segment, acknowledged[20]), where(segment, acknowledged[following]))

    graded, second = graded_after_restart(serve, spool)
    assert len(graded) == 198, f"{len(graded)} of 200 acknowledged runs replayed"
    assert graded == set(acknowledged) - {acknowledged[20], acknowledged[following]}
    assert damage_count(second, "corrupt") == 1


def test_a_segment_of_an_unknown_format_version_is_refused_and_left_as_it_is(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    acknowledged, segment = killed_with_runs(serve, spool, 200)
    number = int(segment.stem.removeprefix("segment-"))
    future = spool / f"segment-{number + 1:012d}.spool"
    content = b"OTGSPOOL\x00\x03\x00\x00" + segment.read_bytes()  # the header a format version 3 would write
    future.write_bytes(content)

    graded, second = graded_after_restart(serve, spool)
    assert graded == set(acknowledged)  # the segment this version reads is replayed whole
    assert future.read_bytes() == content, "a segment of an unknown format must be left as it is"
    (line,) = [line for line in second.log().splitlines() if future.name in line]
    assert "ERROR" in line and "version 3" in line
    assert damage_count(second, "unknown_version") == 1
    assert second.stop() == 0
    assert future.read_bytes() == content


def test_a_bad_line_in_the_graded_marks_is_skipped_and_counted(serve: Serve, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    acknowledged, _ = killed_with_runs(serve, spool, 5)
    folders = [spool_of(spool, run) for run in acknowledged]  # of five runs, at least two share a folder
    at = next(i for i, folder in enumerate(folders) if folders.count(folder) > 1)
    first, second_run = acknowledged[at], acknowledged[next_with_same_owner(spool, acknowledged, at)]
    # two runs of one spool marked graded, with a line as long as a trace id but not text between the marks
    marks = f"{first}\n".encode() + b"\xff\xfe" * 16 + b"\n" + f"{second_run}\n".encode()
    (spool_of(spool, first) / "graded.log").write_bytes(marks)

    graded, second = graded_after_restart(serve, spool)
    assert graded == set(acknowledged) - {first, second_run}  # the marks on either side of the bad line still hold
    assert damage_count(second, "graded_mark") == 1
    assert any("graded.log" in line and "skipped" in line for line in second.log().splitlines())
