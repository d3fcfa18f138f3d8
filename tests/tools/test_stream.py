"""A backfill (`otelgrade grade --since`) over a real traffic archive holds one trace at a time, not the archive,
and a damaged archive file costs only what is damaged: it is skipped, named and counted at the end."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.backfill import write_archive
from otelgrade.cli import main


def flip_a_byte(file: Path) -> None:
    """Flip one byte in the middle of the compressed data of the gzip member nearest the file's middle (a byte of a
    member's header, such as its time stamp, can flip unnoticed)."""
    body = bytearray(file.read_bytes())
    starts = [i for i in range(len(body) - 2) if body[i : i + 3] == b"\x1f\x8b\x08"] + [len(body)]
    start, end = min(itertools.pairwise(starts), key=lambda member: abs((member[0] + member[1]) // 2 - len(body) // 2))
    body[start + 10 + (end - start - 18) // 2] ^= 0xFF  # past the 10-byte header, before the 8-byte trailer
    file.write_bytes(bytes(body))


def test_a_damaged_archive_file_is_skipped_named_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: one flipped byte in one `.gz` file made the whole backfill exit 2 with 0 grades."""
    archive = tmp_path / "archive"
    write_archive(archive, 300, file_bytes="40KB")
    files = sorted(archive.glob("traces-*.pb.gz"))
    assert len(files) >= 3
    flip_a_byte(files[1])
    code = main(["grade", "--since", "30d", "--format", "json", str(archive)])
    out, err = capsys.readouterr()
    graded = {json.loads(line)["trace_id"] for line in out.splitlines()}
    assert code == 0  # every run read passes the default suite; the damage is reported, not fatal
    assert 300 - 3 <= len(graded) < 300  # the damaged gzip member's trace, and at most its neighbours, are lost
    assert f"1 damaged input file(s) skipped in part:\n  {files[1]}: 1 damaged part(s) skipped" in err

    assert main(["grade", "--since", "30d", "--format", "json", "--strict", str(archive)]) == 2
    out, _ = capsys.readouterr()
    assert {json.loads(line)["trace_id"] for line in out.splitlines()} == graded  # graded all the same


def test_a_backfill_reads_back_every_run_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "archive"
    write_archive(archive, 120, file_bytes="30KB")
    assert main(["grade", "--since", "30d", "--format", "text", str(archive)]) == 0
    out, err = capsys.readouterr()
    assert out.count("\nrun ") + out.startswith("run ") == 120 and "120 run(s), 600 grade(s)" in out
    assert "damaged" not in err


@pytest.mark.integration
def test_a_backfill_holds_one_trace_not_the_archive(tmp_path: Path) -> None:
    """Peak RSS of `grade --since` over 1,000 and over 6,000 archived runs, each in a process of its own: before,
    the whole archive was gathered first (1,498 MiB for 40,000 runs, about 37 KB a run); now about the same."""
    peaks = []
    for runs in (1_000, 6_000):
        archive = tmp_path / f"archive-{runs}"
        write_archive(archive, runs, file_bytes="1MB")
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(archive)], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        peaks.append(float(done.stdout))
    assert peaks[1] - peaks[0] < 24, f"peak RSS {peaks[0]:.0f} MiB for 1,000 runs, {peaks[1]:.0f} MiB for 6,000"


# in a process of its own, so that the children's peak RSS is the backfill's alone
_MEASURE = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
from bench.backfill import backfill
took, peak, code, errors = backfill(Path(sys.argv[1]))
assert code in (0, 1), errors
print(peak)
"""
