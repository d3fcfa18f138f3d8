"""A real full disk for tests: a small tmpfs mounted for one test (mounting needs root; without it the test is
skipped with the reason), and a filler file that leaves a chosen amount of it free."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(directory: Path, size: str = "2m") -> Iterator[Path]:
    """Mount a tmpfs of `size` on `directory` for the block (lazily unmounted after it, so a process still
    holding a file there does not keep it mounted)."""
    directory.mkdir(parents=True, exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)]
    try:
        done = subprocess.run(mount, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        pytest.skip("a full-disk test mounts a small tmpfs, and this system has no `mount` command")
    if done.returncode != 0:
        pytest.skip(f"a full-disk test mounts a small tmpfs (root only), and mount said: {done.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True, check=False)


def fill(directory: Path, leave: int) -> Path:
    """Fill the filesystem holding `directory` up to about `leave` free bytes; the filler file, to delete when
    space should come back."""
    stat = os.statvfs(directory)
    free = stat.f_bavail * stat.f_frsize
    filler = directory / "filler"
    with filler.open("wb") as file:
        file.write(b"\0" * max(0, free - leave))
    return filler
