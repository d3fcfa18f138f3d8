"""A full disk, for real (a small tmpfs): under the spool, a request the disk refused leaves nothing that hides
the requests acknowledged once space came back, and the spool frees what is graded and accepts requests again by
itself; under a JSONL sink, runs whose grades could not be written stay in the spool and are written once there
is room (in the same process, or after a restart)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.export.sinks.jsonl import JsonlSink
from tests.conftest import ServeProcess, serve_workers
from tests.disk import fill, small_disk
from tests.intake.test_spool_durability import make_runs, send, wait_until

Serve = Callable[..., ServeProcess]


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk", "2m") as mounted:
        yield mounted


def exporter_for(server: ServeProcess) -> HttpSpanExporter:
    """A real OTLP/HTTP exporter that gives up at once on a 503 (its Retry-After is longer than the timeout)."""
    return HttpSpanExporter(endpoint=f"{server.http_url}/v1/traces", timeout=1)


def send_until_refused(exporter: HttpSpanExporter, most: int = 3000) -> list[str]:
    """Send one run per request until the server refuses one; the runs acknowledged before."""
    acknowledged: list[str] = []
    for run in make_runs(most):
        before = len(acknowledged)
        send(exporter, [run], acknowledged)
        if len(acknowledged) == before:
            return acknowledged
    raise AssertionError(f"{most} runs acknowledged and the disk is still not full")


def graded_in(path: Path) -> list[str]:
    """The trace ids of the grade lines a JSONL file holds whole (see `broken_lines`)."""
    if not path.exists():
        return []
    return [json.loads(line)["trace_id"] for line in path.read_text().splitlines() if line.endswith("}")]


def broken_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.endswith("}")]


def test_requests_acknowledged_after_a_full_disk_survive_kill_9(serve: Serve, disk: Path) -> None:
    spool = disk / "spool"
    config = {"durability": {"spool_dir": str(spool)}, "assembly": {"settle": "60s", "idle_timeout": "120s"}}
    first = serve(config)
    filler = fill(disk, leave=48 * 1024)
    exporter = exporter_for(first)
    before_full = send_until_refused(exporter)
    before_full += until_every_worker_refuses(exporter)
    filler.unlink()  # space comes back
    after_full: list[str] = []
    send(exporter, make_runs(123), after_full)
    exporter.shutdown()
    assert len(after_full) == 123
    first.kill()  # SIGKILL: nothing is graded yet, everything acknowledged is in the spool only

    second = serve({"durability": {"spool_dir": str(spool)}})
    acknowledged = set(before_full) | set(after_full)
    graded = graded_by(second, acknowledged, timeout=15)
    kept = len(graded & set(after_full))
    assert kept == 123, f"{kept} of 123 runs acknowledged after the disk had room again were graded"
    assert acknowledged <= graded


def until_every_worker_refuses(exporter: HttpSpanExporter) -> list[str]:
    """After a refusal, send runs five at a time until a whole batch is refused: the runs acknowledged meanwhile.
    One process refuses every request once its spool met the full disk; with several grading workers, each
    refuses once its own spool file does, and a worker that has not yet still acknowledges what it wrote."""
    acknowledged: list[str] = []
    for _ in range(50):
        batch: list[str] = []
        send(exporter, make_runs(5), batch)
        if not batch:
            return acknowledged
        assert serve_workers() > 1, f"{len(batch)} of 5 runs acknowledged after the spool refused one"
        acknowledged += batch
    raise AssertionError(f"{len(acknowledged)} runs acknowledged after the first refusal: the disk is not full")


def graded_by(server: ServeProcess, expected: set[str], timeout: float) -> set[str]:
    """The trace ids graded once `expected` all are, or when `timeout` runs out."""
    deadline = time.monotonic() + timeout
    graded = set(graded_in(server.grades_path))
    while not expected <= graded and time.monotonic() < deadline:
        time.sleep(0.2)
        graded = set(graded_in(server.grades_path))
    return graded


def test_a_full_spool_frees_what_is_graded_and_says_so_once(serve: Serve, disk: Path) -> None:
    server = serve({"durability": {"spool_dir": str(disk / "spool")}, "assembly": {"settle": "1s"}})
    fill(disk, leave=64 * 1024)  # stays: only what the spool frees makes room
    exporter = exporter_for(server)
    acknowledged = send_until_refused(exporter)
    refused: list[str] = []
    send(exporter, make_runs(20), refused)  # senders keep retrying meanwhile
    assert len(refused) < 20

    wait_until(lambda: len(send_batch(exporter, acknowledged)) == 1, 10, "the spool accepting requests again")
    graded_by(server, set(acknowledged), timeout=10)  # with several workers: each one's spool freed, not just one
    later: list[str] = []
    send(exporter, make_runs(30), later)
    exporter.shutdown()
    assert len(later) == 30
    everything = set(acknowledged + later)
    assert graded_by(server, everything, timeout=10) >= everything
    spool_lines = [line for line in server.log().splitlines() if "spool" in line]
    refusing = [line.split("spool ", 1)[1].split(":", 1)[0] for line in spool_lines if " ERROR " in line]
    assert refusing and len(refusing) == len(set(refusing)) <= serve_workers(), spool_lines  # once per spool folder
    assert any("writing again" in line for line in spool_lines), spool_lines


def send_batch(exporter: HttpSpanExporter, acknowledged: list[str]) -> list[str]:
    """Send one run; the list of it when acknowledged (added to `acknowledged` too), else empty."""
    this: list[str] = []
    send(exporter, make_runs(1), this)
    acknowledged.extend(this)
    if not this:
        time.sleep(0.1)
    return this


def test_runs_whose_grades_a_full_disk_refused_are_graded_after_a_restart(serve: Serve, disk: Path) -> None:
    grades = disk / "grades.jsonl"
    spool_dir = disk.parent / "spool"  # the spool has room; the grades file does not
    config = {"durability": {"spool_dir": str(spool_dir)}, "sinks": [{"type": "jsonl", "path": str(grades)}]}
    first = serve(config)
    filler = fill(disk, leave=24 * 1024)
    exporter = exporter_for(first)
    acknowledged: list[str] = []
    send(exporter, make_runs(400), acknowledged)
    exporter.shutdown()
    assert len(acknowledged) == 400
    first.wait_for_metric("otelgrade_runs_graded_total", None, 400)
    time.sleep(1)  # a spool mark (were one made) and the sink's retries
    written = set(graded_in(grades))
    assert len(written) < 400
    assert list(spool_dir.glob("segment-*.spool")), "runs whose grades are not written must stay in the spool"
    first.kill()
    filler.unlink()

    second = serve(config)
    second.grades_path = grades
    graded_by(second, set(acknowledged), timeout=15)
    lines = graded_in(grades)
    assert len(lines) == len(set(lines)) == 400, f"{len(set(lines))} runs graded, {len(lines)} lines"
    assert not broken_lines(grades)
    assert second.stop() == 0


def grade(n: int) -> Grade:
    return Grade(f"{n + 1:032x}", f"{n + 1:016x}", "suite", "grader", 1.0, True, "pass", "x" * 400)


def test_the_jsonl_sink_keeps_what_a_full_disk_refused_and_writes_it_once_there_is_room(
    disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    filler = fill(disk, leave=8 * 1024)
    metrics = Metrics()
    path = disk / "grades.jsonl"
    sink = JsonlSink(path, metrics, flush_interval=0.05)
    with caplog.at_level(logging.INFO, logger="otelgrade.export.sinks"):
        for n in range(100):
            sink.write([grade(n)])
        sink.flush()
        assert 0 < len(graded_in(path)) < 50 and not broken_lines(path)
        filler.unlink()
        wait_until(lambda: len(graded_in(path)) == 100, 10, "the grades held back written")
        assert not sink.unwritten()
        sink.close()
    assert graded_in(path) == [grade(n).trace_id for n in range(100)]  # each once, in order
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "No space left" in errors[0].getMessage()
