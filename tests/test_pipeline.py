"""The `Pipeline` a config builds: what `otelgrade grade` writes (its report, never the config's sinks), and a
reload that swaps the suites and how traces are read together, between two traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from otelgrade.cli import main
from otelgrade.config import parse_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.intake.decode import decode_traces
from otelgrade.pipeline import Pipeline

HAPPY = Path(__file__).parent / "fixtures" / "traces" / "pydantic-ai-v5" / "happy"
SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}


class Kept:
    """A sink holding what it is given."""

    def __init__(self) -> None:
        self.grades: list[Grade] = []

    def write(self, grades: list[Grade]) -> None:
        self.grades.extend(grades)

    def flush(self) -> None: ...

    def close(self) -> None: ...


def test_offline_grading_prints_its_report_and_writes_no_configured_sink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "otelgrade.yaml"
    doc = {"suites": [{"name": "booking", "graders": [SAFE]}], "sinks": [{"type": "jsonl", "path": "grades.jsonl"}]}
    config.write_text(yaml.safe_dump(doc))
    assert main(["grade", "--config", str(config), "--format", "json", str(HAPPY)]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed and {g["grader"] for g in printed} == {"safe"}
    assert not (tmp_path / "grades.jsonl").exists()  # the live service's sink, not the command's output


def test_a_reload_grades_the_next_trace_with_the_new_suites_only() -> None:
    spans = [s for f in sorted(HAPPY.glob("*.pb")) for s in decode_traces(f.read_bytes()).spans]
    kept = Kept()
    pipeline = Pipeline(parse_config({"suites": [{"name": "before", "graders": [SAFE]}]}), Metrics(), sinks=[kept])
    pipeline.grade_trace(spans)
    assert {g.suite for g in kept.grades} == {"before"}
    pipeline.install(pipeline.prepare(parse_config({"suites": [{"name": "after", "graders": [SAFE]}]})))
    kept.grades.clear()
    pipeline.grade_trace(spans)
    assert {g.suite for g in kept.grades} == {"after"}
