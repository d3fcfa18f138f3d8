"""A relative path in a config file starts from that file's folder, wherever its key is nested: the real
`otelgrade` command run from another working directory finds a rubric's `prompt_path` inside `all_of` and a
letta grader's custom-function module, and `check-config` names the absolute path it looked for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fake_openai import FakeOpenAI, Reply

HAPPY = Path(__file__).parent / "fixtures" / "traces" / "pydantic-ai-v5" / "happy"  # answers "... ABC123456"
PROMPT = "Booking rubric 7f3: was the trip booked? The agent answered: {submission}"
CHECKS = """\
import re
from otelgrade import custom_grader

@custom_grader
def confirmation_number(sample, submission):
    found = re.search(r"ABC\\d+", submission)
    return (1.0, f"confirmation {found.group(0)}") if found else (0.0, "no confirmation number")
"""
LETTA_TOOL = {"kind": "tool", "function": "confirmation_number", "module": "checks/booking.py"}
FUNCTION_IN_FILE = {"kind": "tool", "function": "checks/booking.py:confirmation_number"}


def project(tmp_path: Path, config: dict[str, Any]) -> Path:
    """A config folder with a prompt file and a module of grading functions; the config file's path."""
    folder = tmp_path / "project"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "booked.txt").write_text(PROMPT)
    (folder / "checks").mkdir()
    (folder / "checks" / "booking.py").write_text(CHECKS)
    path = folder / "otelgrade.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def otelgrade(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m otelgrade ARGS` from a working directory that is not the config's folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [sys.executable, "-m", "otelgrade", *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )


def grades(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    return {g["grader"]: g for g in map(json.loads, result.stdout.splitlines())}


def test_a_rubric_nested_in_all_of_reads_its_prompt_file_from_the_config_folder(tmp_path: Path) -> None:
    with FakeOpenAI(default=Reply.grade(0.9, "booked")) as fake:
        rubric = {"type": "rubric", "prompt_path": "prompts/booked.txt"}
        both = {"name": "booked", "type": "all_of", "graders": [rubric, {"type": "max_tool_calls", "max": 10}]}
        config = project(tmp_path, {"judge": {"base_url": fake.base_url}, "suites": [{"name": "s", "graders": [both]}]})
        result = otelgrade(tmp_path, "grade", "--config", str(config), "--yes", "--format", "json", str(HAPPY))
    assert grades(result)["booked"]["outcome"] == "pass"
    (request,) = fake.requests
    asked = json.dumps(request["messages"])
    assert "Booking rubric 7f3" in asked and "Confirmation: ABC123456" in asked


@pytest.mark.parametrize(
    "config",
    [
        {"name": "booking", "graders": {"booked": LETTA_TOOL}},  # a letta-evals suite file
        {"suites": [{"name": "booking", "graders": [{"name": "booked", "type": "any_of", "graders": [LETTA_TOOL]}]}]},
        {
            "name": "booking",
            "graders": {"booked": {"kind": "tool", "function": "checks/booking.py:confirmation_number"}},
        },
    ],
    ids=["letta-file", "nested-in-any_of", "function-names-its-file"],
)
def test_a_letta_custom_function_module_is_imported_from_the_config_folder(
    tmp_path: Path, config: dict[str, Any]
) -> None:
    result = otelgrade(tmp_path, "grade", "--config", str(project(tmp_path, config)), "--format", "json", str(HAPPY))
    booked = grades(result)["booked"]
    assert booked["outcome"] == "pass", booked
    assert "confirmation ABC123456" in json.dumps(booked), booked


@pytest.mark.parametrize(
    ("grader", "key", "missing"),
    [
        (
            {"type": "all_of", "graders": [{"type": "rubric", "prompt_path": "prompts/gone.txt"}]},
            "suites[0].graders[0].graders[0].prompt_path",
            "prompts/gone.txt",
        ),
        ({**LETTA_TOOL, "module": "checks/gone.py"}, "suites[0].graders[0].module", "checks/gone.py"),
    ],
    ids=["prompt_path-in-all_of", "letta-module"],
)
def test_check_config_names_the_file_the_key_and_the_absolute_path_it_looked_for(
    tmp_path: Path, grader: dict[str, Any], key: str, missing: str
) -> None:
    config = project(tmp_path, {"suites": [{"name": "s", "graders": [grader]}]})
    result = otelgrade(tmp_path, "check-config", str(config))
    assert result.returncode == 2
    assert f"{config}: {key}: no file at {str(config.parent / missing)!r}" in result.stderr
    assert "starts from the folder of the config file that names it" in result.stderr
