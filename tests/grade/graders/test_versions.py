"""Grader versions: a verdict says which grader gave it. The version changes with what can change a verdict's
meaning (a threshold, a prompt file's text, the judge model) and with nothing else (key order, YAML layout, the
grader's sampling)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from prometheus_client import generate_latest

from otelgrade.cli import main
from otelgrade.config import load_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.trajectory import Trajectory
from otelgrade.export.sinks.otlp import evaluation_event
from otelgrade.pipeline import Pipeline
from tests.paths import REPO

RUBRIC = {"name": "helpful", "type": "rubric", "prompt_path": "rubric.txt", "threshold": 0.7}
SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account", "drop_table"]}


def versions(tmp_path: Path, doc: dict[str, object] | str, name: str = "otelgrade.yaml") -> dict[str, str]:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return {g.name: g.version for s in load_config(path).suites for g in s.graders}


def config(*graders: dict[str, object], judge: str = "gpt-4o-mini") -> dict[str, object]:
    return {"judge": {"model": judge}, "suites": [{"name": "support", "graders": list(graders)}]}


@pytest.fixture
def rubric_file(tmp_path: Path) -> Path:
    path = tmp_path / "rubric.txt"
    path.write_text("Is the answer helpful and polite?")
    return path


def test_a_version_does_not_depend_on_key_order_or_layout(tmp_path: Path, rubric_file: Path) -> None:
    first = versions(tmp_path, config(RUBRIC, SAFE))
    reordered = """
suites:
  - graders:
      - tools:
          - delete_account
          - drop_table
        type: tools_not_called      # a comment, other spacing
        name: safe
      - {threshold: 0.7, prompt_path: rubric.txt, type: rubric, name: helpful}
    name: support
judge: {model: gpt-4o-mini}
"""
    assert versions(tmp_path, reordered, "other.yaml") == first
    assert len(first["helpful"]) == 12 and first["helpful"] != first["safe"]


def test_what_changes_a_verdict_changes_the_version(tmp_path: Path, rubric_file: Path) -> None:
    before = versions(tmp_path, config(RUBRIC, SAFE))
    assert versions(tmp_path, config({**RUBRIC, "threshold": 0.8}, SAFE))["helpful"] != before["helpful"]
    assert versions(tmp_path, config(RUBRIC, SAFE, judge="gpt-4o"))["helpful"] != before["helpful"]
    rubric_file.write_text("Is the answer helpful, polite and correct?")
    changed = versions(tmp_path, config(RUBRIC, SAFE))
    assert changed["helpful"] != before["helpful"]
    assert changed["safe"] == before["safe"]  # another grader, and the judge model is nothing to a code grader
    assert versions(tmp_path, config(RUBRIC, SAFE, judge="gpt-4o"))["safe"] == before["safe"]


def test_renaming_a_grader_keeps_its_version(tmp_path: Path, rubric_file: Path) -> None:
    before = versions(tmp_path, config(RUBRIC))
    assert versions(tmp_path, config({**RUBRIC, "name": "helpful_v1"}))["helpful_v1"] == before["helpful"]


def test_grades_and_the_info_metric_carry_the_version(tmp_path: Path, rubric_file: Path) -> None:
    loaded = load_config(_written(tmp_path, config(SAFE)))
    metrics = Metrics()
    grading = Pipeline(loaded, metrics, sinks=())
    run = Trajectory(trace_id="a" * 32, span_id="b" * 16, input="hi", output="hello")
    grades, _ = grading.grade(run)
    version = loaded.suites[0].graders[0].version
    assert [g.version for g in grades] == [version]
    exposition = generate_latest(metrics.registry).decode()
    assert f'otelgrade_grader_version_info{{grader="safe",suite="support",version="{version}"}} 1.0' in exposition
    changed = load_config(_written(tmp_path, config({**SAFE, "tools": ["delete_account"]})))
    grading.install(grading.prepare(changed))
    exposition = generate_latest(metrics.registry).decode()
    assert version not in exposition  # the old version's series is gone: a dashboard sees the change
    assert changed.suites[0].graders[0].version in exposition


def test_check_config_prints_each_graders_version(
    tmp_path: Path, rubric_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _written(tmp_path, config(RUBRIC, SAFE))
    assert main(["check-config", str(path)]) == 0
    out = capsys.readouterr().out
    for name, version in versions(tmp_path, config(RUBRIC, SAFE)).items():
        assert f"support/{name}" in out and version in out


def _written(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_otlp_evaluation_event_carries_the_version() -> None:
    grade = Grade("a" * 32, "b" * 16, "support", "safe", 1.0, True, "pass", "", version="0123456789ab")
    assert evaluation_event(grade)["otelgrade.grader.version"] == "0123456789ab"


VERSIONS_OF_EVERY_TYPE = """
import json, sys
from pathlib import Path
from otelgrade.grade.graders import grader_specs
from otelgrade.grade.graders.base import grader_type
from otelgrade.grade.graders.reference import example
from otelgrade.grade.graders.versions import grader_version
from tests.core.test_registry import grader_types

folder = Path(sys.argv[1])
(folder / "helpful.txt").write_text("Was the answer helpful? {submission}")
blocks = {t: {"scope": grader_type(t).scopes[0], **example(t)} for t in grader_types()}
print(json.dumps({t: grader_version(grader_specs(b, "case", base_dir=folder)[0]) for t, b in blocks.items()}))
"""


def test_every_grader_types_version_is_the_same_in_another_process(tmp_path: Path) -> None:
    """Nothing a process draws at random (hash seeds, object addresses) reaches a version."""
    runs = [
        subprocess.run(
            [sys.executable, "-c", VERSIONS_OF_EVERY_TYPE, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=REPO,
        )
        for seed in ("1", "2")
    ]
    first, second = (json.loads(run.stdout) for run in runs)
    assert len(first) > 50 and first == second
