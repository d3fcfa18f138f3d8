"""The examples shipped in the package load, and grade their example run the way their comments say."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

EXAMPLES = Path(str(resources.files("otelgrade") / "examples"))


def otelgrade(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin"}  # no OPENAI_API_KEY: the judge grader is reported disabled and skipped
    return subprocess.run(
        [sys.executable, "-m", "otelgrade", *args], capture_output=True, text=True, env=env, cwd=EXAMPLES, timeout=60
    )


def test_example_config_is_valid():
    result = otelgrade("check-config", "otelgrade.yaml")
    assert result.returncode == 0, result.stderr
    assert "2 suite(s), 8 grader(s)" in result.stdout


def test_example_run_passes_every_code_grader():
    result = otelgrade("grade", "--config", "otelgrade.yaml", "--format", "json", "booking-run.json")
    assert result.returncode == 0, result.stderr
    grades = {g["grader"]: g["outcome"] for g in map(json.loads, result.stdout.splitlines())}
    assert grades.pop("helpful") == "skipped"
    assert set(grades.values()) == {"pass"} and len(grades) == 7
    assert "OPENAI_API_KEY is not set" in result.stderr


def test_example_run_is_rebuilt_from_its_otlp_json():
    result = otelgrade("trajectories", "booking-run.json")
    [run] = map(json.loads, result.stdout.splitlines())
    assert run["agent_name"] == "booking_agent" and run["service_name"] == "booking-agent"
    assert [c["name"] for c in run["tool_calls"]] == ["search_flights", "book_flight"]
    assert run["input"] == "Book me the cheapest flight from SFO to JFK tomorrow."
    assert "ABC123456" in run["output"] and len(run["llm_calls"]) == 3
