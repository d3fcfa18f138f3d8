"""The spool's own promises: what was appended is replayed after a crash (a torn last write is cut off, never
read as a request), files go as soon as their runs are graded, and the graded log keeps what replay needs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from otelgrade.spool import Record, Spool


def trace(n: int) -> str:
    return f"{n:032x}"


def append_all(spool: Spool, records: list[tuple[Record, list[str]]]) -> None:
    async def run() -> None:
        await asyncio.gather(*(spool.append(record, ids) for record, ids in records))

    asyncio.run(run())


def test_a_torn_last_write_is_cut_off_and_the_rest_replayed(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    records = [(Record("traces", "protobuf", bytes([n]) * 100), [trace(n)]) for n in range(3)]
    append_all(spool, records)
    spool.close()
    (segment,) = tmp_path.glob("segment-*.spool")
    whole = segment.stat().st_size
    with segment.open("ab") as file:  # a request killed mid-write: header and part of its body
        file.write(b"\x00\x00\x01\x00\x12\x34\x56\x78\x00\x00partial")

    again = Spool(tmp_path)
    replayed = list(again.replay())
    assert [record for _, record in replayed] == [record for record, _ in records]
    assert segment.stat().st_size == whole
    again.close()


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
