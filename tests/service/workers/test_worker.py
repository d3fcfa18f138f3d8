"""A grading worker process as the receiving process drives it, over its stdin and stdout: it says when it is
ready, answers the heartbeat, and sends its metrics when asked."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from otelgrade.service.workers import frames


@pytest.fixture
def worker(tmp_path: object) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "otelgrade.service.workers.worker", "-", "0", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    yield process
    process.kill()  # the receiving process's shutdown of its workers is tested with `serve` (test_front)
    process.wait()


def frames_until(process: subprocess.Popen[bytes], wanted: int, timeout: float = 20.0) -> list[tuple[int, bytes]]:
    """The frames the worker writes, until one of kind `wanted` (or the timeout)."""
    assert process.stdout is not None
    got: list[tuple[int, bytes]] = []
    buffer, end = b"", time.monotonic() + timeout
    while time.monotonic() < end and wanted not in [kind for kind, _ in got]:
        if select.select([process.stdout], [], [], 0.5)[0]:
            buffer += os.read(process.stdout.fileno(), 1 << 16)
        while len(buffer) >= frames.HEADER.size:
            length, kind = frames.HEADER.unpack_from(buffer)
            if len(buffer) < frames.HEADER.size + length:
                break
            got.append((kind, buffer[frames.HEADER.size : frames.HEADER.size + length]))
            buffer = buffer[frames.HEADER.size + length :]
    return got


def send(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()


def test_a_worker_says_it_is_ready_and_answers_the_heartbeat(worker: subprocess.Popen[bytes]) -> None:
    assert frames.READY in [kind for kind, _ in frames_until(worker, frames.READY)]
    send(worker, frames.frame(frames.PING))
    assert frames.PONG in [kind for kind, _ in frames_until(worker, frames.PONG, timeout=5)]


def test_a_worker_sends_its_metrics_under_the_request_id(worker: subprocess.Popen[bytes]) -> None:
    frames_until(worker, frames.READY)
    send(worker, frames.frame(frames.SCRAPE, frames.ID.pack(42)))
    (payload,) = [p for kind, p in frames_until(worker, frames.METRICS, timeout=10) if kind == frames.METRICS]
    assert frames.ID.unpack_from(payload) == (42,)
    assert len(payload) > frames.ID.size
