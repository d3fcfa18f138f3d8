"""docs/graders.md is the grader registry written out: every type, and current; every example in it loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from otelgrade.config import load_config
from otelgrade.grade.graders import grader_type, list_graders
from otelgrade.grade.graders.multiturn import CONVERSATION_ONLY
from otelgrade.grade.graders.reference import example, render
from tests.paths import REPO

ROOT = REPO
REFERENCE = ROOT / "docs" / "graders.md"
REGENERATE = "python -m otelgrade.grade.graders.reference docs/graders.md"


def built_in() -> list[str]:
    return [n for n in list_graders() if grader_type(n).factory.__module__.startswith("otelgrade.")]


def test_the_committed_reference_is_current() -> None:
    assert REFERENCE.read_text() == render(), f"docs/graders.md is stale: run `{REGENERATE}` and commit it"


def test_the_reference_has_a_section_for_every_registered_type() -> None:
    text = REFERENCE.read_text()
    missing = [n for n in built_in() if f"### `{n}`\n" not in text]
    assert not missing, f"not in docs/graders.md: {missing}; run `{REGENERATE}`"
    for old in ("contains", "output-matches", "ascii_printable_only"):
        assert f"`{old}`" in text  # its deprecated spelling is listed beside the type it loads


def snippet(type_name: str) -> dict[str, Any]:
    """The example block docs/graders.md shows under the type's heading, as YAML reads it."""
    section = REFERENCE.read_text().split(f"### `{type_name}`\n", 1)[1]
    [block] = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    assert isinstance(block, dict)
    return block


@pytest.mark.parametrize("type_name", built_in())
def test_every_example_loads_as_written(type_name: str, tmp_path: Path) -> None:
    (tmp_path / "helpful.txt").write_text("Was the answer helpful? {submission}")
    shown = snippet(type_name)
    assert {k: v for k, v in shown.items() if k != "name"} == example(type_name)
    suite: dict[str, Any] = {"name": "s", "graders": [shown]}
    if type_name in CONVERSATION_ONLY:
        suite["level"] = "conversation"
    (tmp_path / "otelgrade.yaml").write_text(yaml.safe_dump({"suites": [suite]}))
    [loaded] = load_config(tmp_path / "otelgrade.yaml").suites
    assert [spec.type for spec in loaded.graders][:1] == [type_name]


def test_the_readme_links_the_reference() -> None:
    assert "(docs/graders.md)" in (ROOT / "README.md").read_text()
