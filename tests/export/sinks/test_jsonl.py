"""The JSONL sink: one grade per line, append-only, on disk within a second, rotated by size."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.export.sinks import read_sink
from otelgrade.export.sinks.jsonl import JsonlSink
from tests.paths import REPO

REPO = REPO


def grade(i: int, outcome: str = "pass", rationale: str = "ok") -> Grade:
    return Grade(
        trace_id=f"{i + 1:032x}",
        span_id=f"{i + 1:016x}",
        suite="booking",
        grader="safe",
        score=1.0 if outcome == "pass" else 0.0,
        passed=outcome == "pass",
        outcome=outcome,
        rationale=rationale,
        grader_type="tools_not_called",
        agent_name="booker",
        time_unix=1_700_000_000.0 + i,
        metadata={"n": i, "unicode": "café ✓"},
    )


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def errors(metrics: Metrics, sink: str = "jsonl") -> float:
    value = metrics.registry.get_sample_value("otelgrade_sink_errors_total", {"sink": sink})
    return value or 0.0


def test_one_grade_per_line_as_its_dict(tmp_path: Path) -> None:
    path = tmp_path / "out" / "grades.jsonl"  # the directory is created
    sink = JsonlSink(path, Metrics())
    grades = [grade(0), grade(1, "fail", "called delete_account\nline two"), grade(2, "error")]
    sink.write(grades[:1])
    sink.write(grades[1:])
    sink.close()
    assert read_lines(path) == [g.to_dict() for g in grades]
    assert path.read_text(encoding="utf-8").count("\n") == 3  # a newline in a rationale stays escaped


def test_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    first = JsonlSink(path, Metrics())
    first.write([grade(0)])
    first.close()
    second = JsonlSink(path, Metrics())
    second.write([grade(1)])
    second.close()
    assert [line["trace_id"] for line in read_lines(path)] == [grade(0).trace_id, grade(1).trace_id]


def test_a_written_line_reaches_disk_within_a_second_without_close(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    sink = JsonlSink(path, Metrics())
    sink.write([grade(7)])
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and not (path.exists() and path.stat().st_size):
        time.sleep(0.05)
    assert read_lines(path) == [grade(7).to_dict()]
    sink.close()


def test_a_killed_process_keeps_lines_older_than_a_second(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    script = textwrap.dedent(
        f"""
        import sys, time
        from otelgrade.core.metrics import Metrics
        from otelgrade.core.results import Grade
        from otelgrade.export.sinks.jsonl import JsonlSink
        sink = JsonlSink({str(path)!r}, Metrics())
        for i in range(3):
            sink.write([Grade(f"{{i + 1:032x}}", f"{{i + 1:016x}}", "s", "g", 1.0, True, "pass", "ok")])
        print("written", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "written"
        time.sleep(1.0)
        proc.kill()  # SIGKILL: no close, no atexit, no buffer flush
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [line["trace_id"] for line in read_lines(path)] == [f"{i + 1:032x}" for i in range(3)]


def test_rotates_by_size_keeping_the_configured_backups(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    line_bytes = len(json.dumps(grade(0).to_dict(), ensure_ascii=False, separators=(",", ":")).encode()) + 1
    sink = JsonlSink(path, Metrics(), max_bytes=line_bytes * 3 + 10, backups=2)
    written = [grade(i) for i in range(20)]
    for g in written:
        sink.write([g])
    sink.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["grades.jsonl", "grades.jsonl.1", "grades.jsonl.2"]
    for name in files:
        assert (tmp_path / name).stat().st_size <= line_bytes * 3 + 10
    kept = [line["trace_id"] for name in files[::-1] if name != "grades.jsonl" for line in read_lines(tmp_path / name)]
    kept += [line["trace_id"] for line in read_lines(path)]
    # oldest backup first, then the live file: the newest grades, in order, nothing duplicated
    assert kept == [g.trace_id for g in written[-len(kept) :]]
    assert len(kept) >= 7


def test_no_backups_means_the_file_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    sink = JsonlSink(path, Metrics(), max_bytes=2000, backups=0)
    for i in range(50):
        sink.write([grade(i)])
    sink.close()
    assert [p.name for p in tmp_path.iterdir()] == ["grades.jsonl"]
    assert read_lines(path)[-1]["trace_id"] == grade(49).trace_id
    assert path.stat().st_size <= 2000


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    sink = JsonlSink(path, Metrics(), max_bytes=50_000, backups=100)
    big = "x" * 3000  # lines longer than a pipe buffer would tear if writes interleaved

    def worker(w: int) -> None:
        for i in range(100):
            sink.write([grade(w * 1000 + i, rationale=big), grade(w * 1000 + i, "fail", big)])

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sink.close()
    lines = [line for p in tmp_path.iterdir() for line in read_lines(p)]
    assert len(lines) == 6 * 100 * 2
    assert len({(line["trace_id"], line["outcome"]) for line in lines}) == 1200


def test_write_errors_are_counted_logged_once_never_raised_and_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    metrics = Metrics()
    sink = JsonlSink(blocker / "grades.jsonl", metrics)
    with caplog.at_level(logging.WARNING, logger="otelgrade.export.sinks"):
        sink.write([grade(0), grade(1)])
        sink.write([grade(2)])
        sink.flush()
        assert errors(metrics) == 3
        assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1
        blocker.unlink()
        blocker.mkdir()  # the path becomes writable: the sink writes what it held, in order, and says so
        sink.write([grade(3)])
        sink.close()
    assert read_lines(blocker / "grades.jsonl") == [grade(n).to_dict() for n in range(4)]
    assert any("writing again" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_write_after_close_is_counted_not_raised(tmp_path: Path) -> None:
    metrics = Metrics()
    sink = JsonlSink(tmp_path / "g.jsonl", metrics)
    sink.close()
    sink.write([grade(0)])
    assert errors(metrics) == 1


def test_a_configured_jsonl_sink_builds_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    sink = read_sink({"type": "jsonl", "path": str(path), "max_bytes": 1000, "backups": 1}).build(Metrics())
    sink.write([grade(0)])
    sink.close()
    assert read_lines(path) == [grade(0).to_dict()]
    assert os.path.getsize(path) < 1000


def test_after_a_crash_grades_the_file_holds_are_not_written_again(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    before = JsonlSink(path, Metrics(), max_bytes=400, backups=2)  # small files: the grades span the backups
    before.write([grade(i) for i in range(6)])
    before.close()  # as if the process died before the spool marked these runs graded
    after = JsonlSink(path, Metrics(), max_bytes=400, backups=2)
    replayed = {grade(i).trace_id for i in (4, 5, 6)}  # the spool holds 4 and 5 again, and 6 never graded
    assert after.skip_held(replayed) == 2
    after.write([grade(4), grade(5, "fail"), grade(6)])  # graded again after the replay
    after.write([grade(4)])  # a later grade with the same identity is written: only one was held
    after.close()
    lines = [line for p in sorted(tmp_path.glob("grades.jsonl*")) for line in read_lines(p)]
    counts = {t: sum(1 for line in lines if line["trace_id"] == t) for t in replayed}
    assert counts == {grade(4).trace_id: 2, grade(5).trace_id: 1, grade(6).trace_id: 1}


def test_a_line_cut_short_by_a_crash_is_removed_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "grades.jsonl"
    whole = json.dumps(grade(0).to_dict()) + "\n"
    path.write_text(whole + '{"trace_id":"0000', encoding="utf-8")  # killed in the middle of a line
    sink = JsonlSink(path, Metrics())
    sink.write([grade(1)])
    sink.close()
    assert [line["trace_id"] for line in read_lines(path)] == [grade(0).trace_id, grade(1).trace_id]


def test_two_processes_appending_to_one_file_and_rotating_it_keep_every_line(tmp_path: Path) -> None:
    """Grading workers each have a JSONL sink on the same file: their lines interleave whole, the file is rotated
    when it (not what one of them wrote) reaches the size, and a rotation by one is followed by the other (two
    sinks open the file apart, as two processes do)."""
    path = tmp_path / "grades.jsonl"
    sinks = [JsonlSink(path, Metrics(), max_bytes=20_000, backups=50) for _ in range(2)]

    for i in range(300):  # the two take turns, as two busy processes do
        sinks[0].write([grade(i)])
        sinks[1].write([grade(1000 + i)])
    for sink in sinks:
        sink.close()
    files = [path, *sorted(tmp_path.glob("grades.jsonl.*"))]
    assert len(files) > 3  # rotated several times
    written = [line["metadata"]["n"] for f in files for line in read_lines(f)]
    assert sorted(written) == [*range(300), *range(1000, 1300)]
    line = max(len(f.read_bytes().split(b"\n")[0]) + 1 for f in files)
    assert all(f.stat().st_size <= 20_000 + line for f in files)  # rotated on the file's size, not one writer's
