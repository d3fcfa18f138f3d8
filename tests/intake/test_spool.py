"""The spool's own promises: what was appended is replayed after a crash (a torn last write is skipped, never read
as a request, and damage costs only the records it hits), files go as soon as their runs are graded, and the
graded log keeps what replay needs."""

from __future__ import annotations

import asyncio
import struct
import zlib
from pathlib import Path

import pytest

from otelgrade.core.metrics import Metrics
from otelgrade.intake.spool import Record, Spool, adopt


def trace(n: int) -> str:
    return f"{n:032x}"


def append_all(spool: Spool, records: list[tuple[Record, list[str]]]) -> None:
    async def run() -> None:
        await asyncio.gather(*(spool.append(record, ids) for record, ids in records))

    asyncio.run(run())


def replayed_bodies(directory: Path, metrics: Metrics | None = None) -> list[bytes]:
    spool = Spool(directory, metrics=metrics)
    bodies = [record.body for _, record in spool.replay()]
    spool.close()
    return bodies


def damage(metrics: Metrics, kind: str) -> float:
    return metrics.registry.get_sample_value("otelgrade_spool_damage_total", {"kind": kind}) or 0.0


def test_a_torn_last_write_is_skipped_and_nothing_is_appended_after_it(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    records = [(Record("traces", "protobuf", bytes([n]) * 100), [trace(n)]) for n in range(3)]
    append_all(spool, records)
    spool.close()
    (segment,) = tmp_path.glob("segment-*.spool")
    with segment.open("ab") as file:  # a request killed mid-write: the start of a record
        file.write(segment.read_bytes()[12:40])

    metrics = Metrics()
    again = Spool(tmp_path, metrics=metrics)
    assert [record for _, record in again.replay()] == [record for record, _ in records]
    assert damage(metrics, "torn") == 1 and damage(metrics, "corrupt") == 0
    append_all(again, [(Record("logs", "json", b"later"), [trace(9)])])
    again.close()
    assert len(list(tmp_path.glob("segment-*.spool"))) == 2  # appends go to a new segment, never after the tear
    assert replayed_bodies(tmp_path)[-1] == b"later"


def test_damage_is_skipped_and_every_whole_record_after_it_replayed(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    bodies = [bytes([n]) * 50 for n in range(6)]
    bodies[1] = segment_record(b"\x00\x01inner") * 3  # a body holding what looks like whole records
    append_all(spool, [(Record("traces", "protobuf", body), [trace(n)]) for n, body in enumerate(bodies)])
    spool.close()
    (segment,) = tmp_path.glob("segment-*.spool")
    data = bytearray(segment.read_bytes())
    second = data.find(bodies[1])
    data[second + 60] ^= 0x01  # a flipped bit in the second request: stepped over whole, by its length
    fourth = data.find(bodies[3])
    data[fourth - 14 : fourth - 10] = b"\xff\xff\xff\xff"  # a bad length in the fourth
    segment.write_bytes(bytes(data))

    metrics = Metrics()
    assert replayed_bodies(tmp_path, metrics) == [bodies[0], bodies[2], bodies[4], bodies[5]]
    assert damage(metrics, "corrupt") == 2


def test_a_segment_of_the_format_before_headers_is_read(tmp_path: Path) -> None:
    """Segments written by releases before format 2 (no header, records `length | crc32 | payload`)."""
    payloads = [b"\x00\x00" + bytes([n]) * 30 for n in range(4)]
    records = [struct.pack(">II", len(p), zlib.crc32(p)) + p for p in payloads]
    records[1] = records[1][:20] + b"?" + records[1][21:]  # damaged
    (tmp_path / "segment-000000000007.spool").write_bytes(b"".join(records))

    metrics = Metrics()
    assert replayed_bodies(tmp_path, metrics) == [p[2:] for n, p in enumerate(payloads) if n != 1]
    assert damage(metrics, "corrupt") == 1


def test_a_mark_cut_short_is_cut_off_before_the_next_is_appended(tmp_path: Path) -> None:
    Spool(tmp_path).close()
    (tmp_path / "graded.log").write_text(f"{trace(1)}\n{trace(2)[:10]}")  # killed while writing a mark
    spool = Spool(tmp_path)
    assert spool.graded_ids() == [trace(1)]
    spool.graded([trace(3)])
    spool.close()
    reader = Spool(tmp_path)
    assert reader.graded_ids() == [trace(1), trace(3)]
    reader.close()


def segment_record(payload: bytes) -> bytes:
    """What a record of format 2 holding `payload` looks like."""
    spool_record = Record("traces", "protobuf", payload[2:])
    header, head = spool_record.encode()
    return header + head + spool_record.body


def test_segments_go_once_their_runs_are_graded_and_graded_runs_are_remembered(tmp_path: Path) -> None:
    spool = Spool(tmp_path, segment_bytes=250)  # about two records per segment
    append_all(spool, [(Record("logs", "json", b"x" * 100), [trace(n)]) for n in range(6)])
    assert len(list(tmp_path.glob("segment-*.spool"))) == 3
    spool.graded([trace(0), trace(1), trace(2)])
    assert len(list(tmp_path.glob("segment-*.spool"))) == 2  # the first is gone; the second still holds 3
    spool.close()

    again = Spool(tmp_path)
    assert again.graded_ids() == [trace(0), trace(1), trace(2)]
    held = {}
    for segment, record in again.replay():
        held.setdefault(segment, []).append(record)
    assert sum(len(r) for r in held.values()) == 4  # traces 2 to 5; trace 2 shares a segment with trace 3
    for segment in held:
        again.hold(segment, [trace(n) for n in range(2, 6)])
    again.replayed()
    again.graded([trace(n) for n in range(3, 6)])
    assert not list(tmp_path.glob("segment-*.spool"))
    again.close()


def test_the_graded_log_is_compacted_to_what_is_still_needed(tmp_path: Path) -> None:
    spool = Spool(tmp_path, keep_graded=10)
    append_all(spool, [(Record("traces", "protobuf", b"pending"), [trace(10_000)])])
    for n in range(50):
        spool.graded([trace(n)])
    assert len((tmp_path / "graded.log").read_text().split()) == 50  # a segment waits: replay may need any
    spool.graded([trace(10_000)])
    for n in range(50, 100):
        spool.graded([trace(n)])
    spool.close()
    reader = Spool(tmp_path)
    kept = reader.graded_ids()
    reader.close()
    assert len(kept) <= 20  # nothing left to replay: the decision cache's share is enough
    assert kept[-10:] == [trace(n) for n in range(90, 100)]


def test_a_second_process_cannot_open_the_same_spool(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    with pytest.raises(OSError, match="in use by another otelgrade process"):
        Spool(tmp_path)
    spool.close()
    Spool(tmp_path).close()  # free again once the first has gone


def test_a_spool_folder_adopted_is_replayed_by_its_new_owner_with_its_marks_and_journal(tmp_path: Path) -> None:
    """The spool of a grading worker that no longer runs moves into worker 0's: its requests replay there after
    worker 0's own, its graded marks still skip theirs, and the lines of its conversation journal follow."""
    ours, theirs = tmp_path, tmp_path / "worker-2"
    own = Spool(ours)
    append_all(own, [(Record("traces", "protobuf", b"own"), [trace(1)])])
    own.close()
    left = Spool(theirs)
    append_all(left, [(Record("traces", "protobuf", f"left {n}".encode()), [trace(10 + n)]) for n in range(3)])
    left.graded([trace(10)])
    left.close()
    (ours / "conversations.journal").write_bytes(b'{"c": "a"}\n{"c": "b", "cut sh')
    (theirs / "conversations.journal").write_bytes(b'{"c": "z"}\n')

    assert adopt(ours, [theirs], journals=["conversations.journal"]) == [theirs]
    assert not theirs.exists()
    again = Spool(ours)
    assert [record.body for _, record in again.replay()] == [b"own", b"left 0", b"left 1", b"left 2"]
    assert trace(10) in again.graded_ids()  # replay skips it, as worker 2 would have
    again.close()
    assert (ours / "conversations.journal").read_bytes() == b'{"c": "a"}\n{"c": "z"}\n'


def test_a_spool_folder_in_use_is_not_adopted(tmp_path: Path) -> None:
    running = Spool(tmp_path / "worker-1")
    append_all(running, [(Record("traces", "protobuf", b"x"), [trace(1)])])
    assert adopt(tmp_path, [tmp_path / "worker-1"]) == []
    assert list((tmp_path / "worker-1").glob("segment-*.spool"))
    running.close()
