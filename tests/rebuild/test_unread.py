"""Runs whose trace carries no content (the instrumentation's default) are never failed for it.

The captures under `tests/fixtures/frameworks/*-default` were made with each framework's default settings,
which record no messages, tool arguments or results. Graded with the embedded default config, and with
graders that need content, every such grade is `skipped` with the reason, counted as skipped, never `fail`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from otelgrade.config import load_config, parse_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade, GradeResult
from otelgrade.core.trajectory import Trajectory
from otelgrade.export.exporter import Exporter
from otelgrade.grade.graders.base import grader
from otelgrade.grade.grading import Grading, Suite
from tests.captures import read_folder
from tests.paths import FIXTURES

FRAMEWORKS = FIXTURES / "frameworks"


def _content_off(folder: Path) -> bool:
    """Whether every run of a capture's scenario lacks its answer: a framework's default that captures no content
    (a `-default` capture of a telemetry schema's default, with content on, is not one)."""
    spec = json.loads((folder.parent / "expected.json").read_text())["scenarios"][folder.name]
    return all("output" in run.get("lacks", []) for run in spec["runs"])


DEFAULTS = sorted(  # pending captures (README: "Pending captures") are evidence, not yet read by the tests
    p
    for p in FRAMEWORKS.glob("*-default/*")
    if p.is_dir() and p.name != "dump" and (p.parent / "expected.json").exists() and _content_off(p)
)


def grade(config_doc: dict | None, folder: Path) -> tuple[list[Grade], Metrics]:
    config = load_config() if config_doc is None else parse_config(config_doc)
    metrics = Metrics()
    grading = Grading([Suite.build(s.name, s.match, s.graders) for s in config.suites], Exporter(metrics), metrics)
    grades = [g for t in read_folder(folder) for g in asyncio.run(grading.grade_and_wait(t))]
    return grades, metrics


def _failed_tool(folder: Path) -> bool:
    """Whether the ground truth of a capture's scenario has a tool call that failed."""
    spec = json.loads((folder.parent / "expected.json").read_text())["scenarios"][folder.name]
    return any(t.get("error") for run in spec["runs"] for t in run["tool_calls"])


@pytest.mark.parametrize("folder", DEFAULTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_embedded_default_never_fails_a_run_for_missing_content(folder: Path) -> None:
    grades, metrics = grade(None, folder)
    assert grades, "the default suite grades every run"
    failing = [g for g in grades if g.outcome == "fail"]
    # A failed tool call is carried by the trace (its span's status) with content off too: tool_errors may fail
    # on it, naming the tool, where the ground truth has one; nothing fails for missing content.
    if _failed_tool(folder):
        assert {g.grader for g in failing} == {"tool_errors"}, [(g.grader, g.rationale) for g in failing]
        assert all("tool calls failed" in g.rationale for g in failing)
    else:
        assert not failing, [(g.grader, g.rationale) for g in grades]
    completed = [g for g in grades if g.grader == "completed"]
    assert completed and all(g.outcome == "skipped" for g in completed)
    assert all(g.rationale.startswith("content not captured") for g in completed)
    skipped = metrics.registry.get_sample_value(
        "otelgrade_grades_total",
        {"suite": "default", "grader": "completed", "outcome": "skipped", "environment": "unknown"},
    )
    assert skipped == len(completed)


def test_content_graders_skip_and_structure_graders_still_judge() -> None:
    folder = FRAMEWORKS / "openai-v2-default" / "happy"
    doc = {
        "suites": [
            {
                "name": "s",
                "graders": [
                    {"name": "says_booked", "type": "output_contains", "values": ["booked"]},
                    {"name": "args", "type": "tool_call_accuracy", "ground_truth": [{"name": "search_flights"}]},
                    {"name": "judge", "type": "rubric", "prompt": "Is {submission} a good answer to {input}?"},
                    {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
                    {"name": "few", "type": "max_tool_calls", "max": 1},
                ],
            }
        ]
    }
    grades = {g.grader: g for g in grade(doc, folder)[0]}
    for name in ("says_booked", "args", "judge"):
        assert grades[name].outcome == "skipped", grades[name]
        assert "content not captured" in grades[name].rationale
    assert grades["safe"].outcome == "pass"  # tool names are always in the trace
    assert grades["few"].outcome == "fail"  # two calls were made: a real failure, carried by the trace


def test_the_same_graders_judge_when_content_is_captured() -> None:
    folder = FRAMEWORKS / "agent-framework" / "happy"
    doc = {"suites": [{"name": "s", "graders": [{"name": "completed", "type": "task_completed"}]}]}
    (completed,) = grade(doc, folder)[0]
    assert completed.outcome == "pass"


@grader("test.says_booked")
def says_booked() -> Callable[[Trajectory], GradeResult]:
    """A plugin grader that reads the answer without declaring `reads=` (as a plugin author may forget to)."""
    return lambda run: GradeResult.check("booked" in (run.output or "").lower(), "the answer says booked")


def test_a_grader_that_reads_what_the_trace_lacks_is_skipped_without_declaring_it() -> None:
    """Before, a grader that read `output` without `reads=("output",)` failed every content-off run."""
    grades, _ = grade(
        {"suites": [{"name": "s", "graders": [{"type": "test.says_booked"}]}]},
        FRAMEWORKS / "openai-v2-default" / "happy",
    )
    assert [(g.outcome, g.rationale) for g in grades] == [
        ("skipped", "content not captured: the trace carries no output")
    ]
