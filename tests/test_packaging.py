"""The Docker image is reproducible: a pinned base image and every runtime dependency from the lock file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[;\s]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_lock_file_pins_every_runtime_dependency() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = dict(line.split("==", 1) for line in (REPO / "requirements.lock").read_text().splitlines() if "==" in line)
    pinned = {name.lower().replace("_", "-"): version for name, version in pinned.items()}
    missing = [d for d in declared if _name(d) not in pinned]
    assert not missing, f"requirements.lock lacks {missing}: regenerate it (see its header)"


def test_the_image_has_a_pinned_base_and_installs_from_the_lock() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    base = re.search(r"^FROM (\S+)", dockerfile, re.MULTILINE)
    assert base and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base.group(1)), base
    assert "requirements.lock" in dockerfile and "--no-deps" in dockerfile
