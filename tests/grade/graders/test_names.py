"""One owner per grader name: unprefixed names are otelgrade's graders, a reference system's are prefixed or come
through its own config shape, and the spellings that used to name a reference system's grader still load it,
with a warning logged once and shown by `check-config`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from otelgrade.cli import main
from otelgrade.config import parse_config
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import build_grader, names
from otelgrade.grade.graders.base import GRADER_TYPES
from otelgrade.grade.graders.names import SYSTEMS, collecting, owner

DONE_NEWLINE = Trajectory(trace_id="1" * 32, span_id="2" * 16, output="done\n")


def graders_of(block: dict[str, Any]) -> list[tuple[str, Any]]:
    [suite] = parse_config({"suites": [{"name": "s", "graders": [block]}]}).suites
    return [(spec.type, build_grader(spec.type, spec.params)) for spec in suite.graders]


def verdict(block: dict[str, Any], run: Trajectory = DONE_NEWLINE) -> tuple[str, bool | None]:
    [(type_name, grader)] = graders_of(block)
    return type_name, grader(run).passed


def test_no_current_unprefixed_name_belongs_to_a_reference_system() -> None:
    built_in = [(key, e) for key, e in GRADER_TYPES.items() if e.factory.__module__.startswith("otelgrade.")]
    for key, entry in built_in:
        if key in entry.deprecated or "." in key or not key.islower():
            continue  # old spellings, prefixed names, and evaldeck's class names (ContainsGrader)
        assert owner(entry.name) == "otelgrade", f"{key} names {owner(entry.name)}'s {entry.name}"
    for _, entry in built_in:
        prefix = entry.name.partition(".")[0]
        assert "." not in entry.name or prefix in SYSTEMS, entry.name


def test_python_and_javascript_regex_checks_have_different_names_and_say_so() -> None:
    # `$` matches before a final newline in Python, not in JavaScript: the two names give opposite verdicts
    assert verdict({"type": "output_matches", "pattern": "^done$"}) == ("output_matches", True)
    assert verdict({"type": "vally.output-matches", "pattern": "^done$"}) == ("vally.output-matches", False)
    assert verdict({"type": "output-matches", "config": {"pattern": "^done$"}}) == ("vally.output-matches", False)


@pytest.mark.parametrize(
    ("old", "new", "params"),
    [
        ("output-matches", "vally.output-matches", {"pattern": "^done$"}),
        ("contains", "potato.contains", {"substring": "DONE"}),
        ("ascii_printable_only", "letta.ascii_printable_only", {"ground_truth": "x"}),
        ("embedding_distance", "potato.embedding_similarity", {}),
    ],
)
def test_an_old_spelling_still_loads_its_grader_and_warns_once(
    old: str, new: str, params: dict[str, Any], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(names, "_logged", set())  # as in a fresh process
    with caplog.at_level(logging.WARNING, logger="otelgrade.config"):
        [(type_name, _)] = graders_of({"name": "g", "type": old, **params})
        graders_of({"name": "g", "type": old, **params})  # a reload: no second line
    assert type_name == new
    said = [r.getMessage() for r in caplog.records if f"{old!r}" in r.getMessage()]
    assert len(said) == 1 and f"write `type: {new}`" in said[0]
    with collecting() as found:
        graders_of({"name": "g", "type": old, **params})
    assert len(found) == 1 and f"write `type: {new}`" in found[0]


def test_the_old_spelling_and_the_prefixed_name_grade_alike() -> None:
    run = Trajectory(trace_id="1" * 32, span_id="2" * 16, output="The DONE thing")
    for old, new in [("contains", "potato.contains"), ("output-contains", "vally.output-contains")]:
        params = {"substring": "done"}
        assert verdict({"type": old, **params}, run) == verdict({"type": new, **params}, run)


def test_a_reference_systems_own_shape_is_not_a_deprecated_spelling() -> None:
    with collecting() as found:
        graders_of({"type": "tool-calls", "config": {"required": ["search"]}})
        graders_of({"name": "contains", "params": {"substring": "x"}})
        graders_of({"kind": "tool", "function": "ascii_printable_only"})
        graders_of({"name": "safe", "type": "tools_not_called", "tools": ["delete"]})
    assert found == []


def test_check_config_shows_each_deprecated_spelling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(
        "suites:\n  - name: s\n    graders:\n"
        "      - {name: a, type: output-matches, pattern: '^x'}\n"
        "      - {name: b, type: all_of, graders: [{type: contains, substring: x}]}\n"
        "      - {name: c, type: max_tool_calls, max: 3}\n"
    )
    assert main(["check-config", str(path)]) == 0
    out = capsys.readouterr().out
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, out
    assert "`type: vally.output-matches`" in warnings[0] and "otelgrade's own `output_matches`" in warnings[0]
    assert "`type: potato.contains`" in warnings[1]
