"""The frames the receiving process and its grading workers exchange: what is written reads back, however the pipe
cuts the bytes."""

from __future__ import annotations

import asyncio

from otelgrade.core.results import Grade
from otelgrade.intake.receivers.base import ExportResult
from otelgrade.service.workers import frames


def read_all(chunks: list[bytes]) -> list[tuple[int, bytes]]:
    async def go() -> list[tuple[int, bytes]]:
        reader = asyncio.StreamReader()
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        return [f async for batch in frames.read_frames(reader) for f in batch]

    return asyncio.run(go())


def test_frames_cut_anywhere_by_the_pipe_read_back_whole_and_in_order() -> None:
    written = frames.export_frame(7, "logs", "json", "http", b'{"resourceLogs": []}') + frames.run_frame("a" * 32, "b")
    for cut in (1, 5, len(written) // 2, len(written) - 1):
        got = read_all([written[:cut], written[cut:]])
        assert [kind for kind, _ in got] == [frames.EXPORT, frames.RUN]
        assert frames.read_export(got[0][1]) == (7, "logs", "json", "http", b'{"resourceLogs": []}')
        assert frames.read_run(got[1][1]) == ("a" * 32, "b")


def test_a_result_and_a_turn_read_back() -> None:
    ((_, payload),) = read_all([frames.result_frame(3, frames.OVERLOADED, ExportResult(2, "busy: retry"))])
    assert frames.read_result(payload) == (3, frames.OVERLOADED, ExportResult(2, "busy: retry"))
    ids = ("c" * 32 + "d" * 16).encode()
    ((_, payload),) = read_all([frames.turn_frame("travel\x00chat-1", ids, b"{}")])
    assert frames.read_turn(payload) == (b"travel\x00chat-1", ids, b"{}")


def test_grades_read_back_field_for_field() -> None:
    graded = Grade("a" * 32, "b" * 16, "booking", "safe", 0.0, False, "fail", "called it", "tools_not_called")
    graded.metadata = {"called": ["delete_account"], "when": frozenset({1})}  # not JSON: sent as its text
    judged = Grade("c" * 32, "d" * 16, "chat", "helpful", None, False, "error", "timed out", level="conversation")
    judged.conversation_id, judged.revision, judged.sampled, judged.environment = "chat-1", 2, False, "prod"
    ((kind, payload),) = read_all([frames.grades_frame([graded, judged])])
    assert kind == frames.GRADES
    graded.metadata["when"] = "frozenset({1})"
    assert frames.read_grades(payload) == [graded, judged]


TO_A_WORKER = ["EXPORT", "SCRAPE", "HOLD_TURN", "FINISH", "PING", "RUNS_OF", "TURN_PASSED"]
FROM_ONE = ["RESULT", "METRICS", "RUN", "GRADES", "READY", "BUSY", "CONVERSATION", "UNMATCHED", "TURN", "DRAINED"]
KINDS = [*TO_A_WORKER, *FROM_ONE, "PONG", "RUNS", "TURN_HELD"]


def test_every_kind_of_frame_has_a_number_of_its_own() -> None:
    numbers = [getattr(frames, kind) for kind in KINDS]
    assert len(set(numbers)) == len(numbers), dict(zip(KINDS, numbers, strict=True))
    assert all(0 < n < 256 for n in numbers)  # one byte in the header
