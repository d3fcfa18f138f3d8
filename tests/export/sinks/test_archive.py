"""The traffic archive: what it keeps reads back, through `otelgrade grade`'s reader, as the very runs the server
graded; it keeps what `keep` says, stays within its bounds, and a file cut short loses only its last trace."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pytest

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade, Outcome
from otelgrade.export.sinks import read_sink
from otelgrade.export.sinks.archive import ArchiveSink, ArchiveSinkSettings
from otelgrade.tools.offline import read_inputs
from tests.captures import read_folder, spans_of
from tests.disk import fill, small_disk
from tests.paths import FIXTURES

FRAMEWORKS = FIXTURES / "frameworks"
LOGS = FIXTURES / "logs"


def archive(tmp_path: Path, **settings: object) -> ArchiveSink:
    config = read_sink({"type": "archive", "path": str(tmp_path / "archive"), **settings})
    assert isinstance(config, ArchiveSinkSettings)
    return ArchiveSink(config, Metrics())


def grade(trace_id: str, outcome: Outcome = "pass") -> Grade:
    return Grade(trace_id, "0" * 16, "suite", "grader", None, outcome == "pass", outcome, "")


def runs(path: Path) -> list[str]:
    return sorted(t.model_dump_json() for t in read_folder(path))


@pytest.mark.parametrize("capture", sorted(p.name for p in FRAMEWORKS.iterdir() if p.is_dir()))
def test_archived_traffic_reads_back_as_the_same_runs(tmp_path: Path, capture: str) -> None:
    sink = archive(tmp_path)
    traces = spans_of(FRAMEWORKS / capture)
    for trace_id, (spans, logs) in traces.items():
        sink.keep_trace(trace_id, spans, logs)
        sink.write([grade(trace_id)])
    assert list((tmp_path / "archive").glob("traces-*.pb.gz"))
    assert runs(tmp_path / "archive") == runs(FRAMEWORKS / capture)


def test_log_records_are_archived_beside_their_spans(tmp_path: Path) -> None:
    sink = archive(tmp_path)
    traces = spans_of(LOGS)
    assert any(logs for _, logs in traces.values())
    for trace_id, (spans, logs) in traces.items():
        sink.keep_trace(trace_id, spans, logs)
        sink.write([grade(trace_id)])
    assert list((tmp_path / "archive").glob("traces-*.logs.pb.gz"))
    assert runs(tmp_path / "archive") == runs(LOGS)


def test_failing_keeps_only_the_traces_of_failed_runs(tmp_path: Path) -> None:
    sink = archive(tmp_path, keep="failing")
    traces = spans_of(FRAMEWORKS / "openai-agents")
    failed = sorted(traces)[::2]
    for trace_id, (spans, logs) in traces.items():
        sink.keep_trace(trace_id, spans, logs)
        sink.write([grade(trace_id, "skipped"), grade(trace_id, "error")])
    for trace_id in failed:  # a judge's verdict, arriving after the trace was graded
        sink.write([grade(trace_id, "fail")])
    assert sorted({t.trace_id for t in read_inputs([tmp_path / "archive"])}) == failed


def test_a_sample_is_the_same_share_of_traces_on_every_replica(tmp_path: Path) -> None:
    everything = spans_of(FRAMEWORKS)
    traces = {t: everything[t] for t in sorted(everything)[:300]}  # 300 captured traces, taken by their random ids
    kept = []
    for replica in ("a", "b"):
        sink = archive(tmp_path / replica, keep="sample", sample=0.5)
        for trace_id, (spans, logs) in traces.items():
            sink.keep_trace(trace_id, spans, logs)
            sink.write([grade(trace_id)])
        kept.append({t.trace_id for t in read_inputs([tmp_path / replica / "archive"])})
    assert kept[0] == kept[1]
    assert 0.3 * len(traces) < len(kept[0]) < 0.7 * len(traces)


def test_the_archive_stays_within_max_bytes(tmp_path: Path) -> None:
    sink = archive(tmp_path, max_bytes=60_000, file_bytes=10_000)
    traces = spans_of(FRAMEWORKS)
    for trace_id, (spans, logs) in traces.items():
        sink.keep_trace(trace_id, spans, logs)
        sink.write([grade(trace_id)])
    files = list((tmp_path / "archive").glob("traces-*"))
    assert len(files) > 2
    assert sum(f.stat().st_size for f in files) <= 60_000 + max(f.stat().st_size for f in files)
    assert read_inputs([tmp_path / "archive"])  # what is left still reads


def test_a_file_cut_short_loses_only_its_last_trace(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sink = archive(tmp_path)
    traces = spans_of(FRAMEWORKS / "openai-agents-multi")
    for trace_id, (spans, logs) in traces.items():
        sink.keep_trace(trace_id, spans, logs)
        sink.write([grade(trace_id)])
    (file,) = (tmp_path / "archive").glob("traces-*.pb.gz")
    body = file.read_bytes()
    file.write_bytes(body[:-7])  # a crash in the middle of the last trace's write
    read = {t.trace_id for t in read_inputs([file])}
    assert len(read) == len(traces) - 1
    assert "cut short" in caplog.text
    assert gzip.decompress(body)  # the whole file is one valid gzip file of many members


def test_a_trace_archived_twice_reads_back_once(tmp_path: Path) -> None:
    """A restart replays the spool's ungraded traces: one archived just before a crash is archived again."""
    traces = spans_of(FRAMEWORKS / "openai-agents-multi")
    sizes = []
    for _ in range(2):  # two processes, one after the other
        sink = archive(tmp_path)
        for trace_id, (spans, logs) in traces.items():
            sink.keep_trace(trace_id, spans, logs)
            sink.write([grade(trace_id)])
        sizes.append(sum(f.stat().st_size for f in (tmp_path / "archive").iterdir()))
    assert sizes[1] == 2 * sizes[0]  # every trace is in the archive twice
    assert runs(tmp_path / "archive") == runs(FRAMEWORKS / "openai-agents-multi")


def test_a_full_disk_loses_whole_traces_counted_and_leaves_valid_files(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        metrics = Metrics()
        config = read_sink({"type": "archive", "path": str(disk / "archive")})
        assert isinstance(config, ArchiveSinkSettings)
        sink = ArchiveSink(config, metrics)
        filler = fill(disk, 200_000)
        traces = spans_of(FRAMEWORKS)
        for trace_id, (spans, logs) in traces.items():  # as the server hands them over: grades first
            sink.write([grade(trace_id)])
            sink.keep_trace(trace_id, spans, logs, waiting=False)
        written, lost = (archived(metrics, result) for result in ("written", "write_error"))
        assert written > 0 and lost > 0 and written + lost == len(traces)  # each trace archived whole, or counted
        assert len({t.trace_id for t in read_inputs([disk / "archive"])}) > 0  # what was written reads
        assert caplog.text.count("cannot archive") == 1  # said once, not once per trace
        filler.unlink()
        last = list(traces)[-1]  # refused: the disk was full by then
        sink.write([grade(last)])
        sink.keep_trace(last, *traces[last], waiting=False)
        assert archived(metrics, "written") == written + 1
        assert last in {t.trace_id for t in read_inputs([disk / "archive"])}


def archived(metrics: Metrics, result: str) -> float:
    return metrics.registry.get_sample_value("otelgrade_archive_traces_total", {"result": result}) or 0.0


def test_files_older_than_max_age_are_deleted_even_after_a_pause(tmp_path: Path) -> None:
    sink = archive(tmp_path, max_age="1d")
    traces = spans_of(FRAMEWORKS / "crewai")
    for trace_id, (spans, logs) in traces.items():
        sink.write([grade(trace_id)])
        sink.keep_trace(trace_id, spans, logs, waiting=False)
    (old,) = (tmp_path / "archive").glob("traces-*.pb.gz")
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    sink.close()
    archive(tmp_path, max_age="1d")  # the service starts again, days later
    assert not old.exists()


def test_workers_sharing_the_archive_never_delete_each_others_current_file(tmp_path: Path) -> None:
    """Two grading workers (two sinks on one directory: each holds its own open files as a process would): the
    one pruning past max_bytes deletes its own closed files and the other's closed ones, never the file the other
    is writing."""
    traces = list(spans_of(FRAMEWORKS).items())
    quiet = archive(tmp_path, max_bytes=20_000, file_bytes=10_000)
    (first_id, (spans, logs)), rest = traces[0], traces[1:]
    quiet.write([grade(first_id)])
    quiet.keep_trace(first_id, spans, logs, waiting=False)
    (writing,) = span_files(tmp_path / "archive")
    busy = archive(tmp_path, max_bytes=20_000, file_bytes=10_000)
    for trace_id, (spans, logs) in rest:
        busy.write([grade(trace_id)])
        busy.keep_trace(trace_id, spans, logs, waiting=False)
    assert len(list((tmp_path / "archive").glob("traces-*"))) > 1
    assert writing.exists(), "the other worker's current file was deleted"
    assert first_id in {run.trace_id for run in read_inputs([writing])}
    assert sum(f.stat().st_size for f in (tmp_path / "archive").glob("traces-*")) <= 20_000 + 2 * 10_000
    quiet.close()  # the first worker stops: its file is an old one like any other
    archive(tmp_path, max_bytes=1)  # a worker starting with a tiny max_bytes deletes all it may
    assert not writing.exists()
    assert len(span_files(tmp_path / "archive")) == 1  # the file the second worker is writing


def span_files(directory: Path) -> list[Path]:
    return [path for path in directory.glob("traces-*.pb.gz") if not path.name.endswith(".logs.pb.gz")]
