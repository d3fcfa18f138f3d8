"""`otelgrade grade` and `otelgrade trajectories` as a CI job runs them: results, output and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from otelgrade.cli import main
from tests.fake_openai import FakeOpenAI, Reply

SOURCE = Path(__file__).parent / "fixtures" / "traces" / "pydantic-ai-v5"

# One grader of each reference family, in each family's own shape.
CONFIG = {
    "suites": [
        {
            "name": "booking",
            "graders": [
                {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},  # evaldeck
                {"type": "tool-calls", "name": "no_delete", "config": {"disallowed": ["^delete_account$"]}},  # vally
                {"name": "contains", "params": {"substring": "booked"}, "key": "booked"},  # Potato
            ],
        },
        {
            "name": "letta",
            "graders": {
                "confirmation": {
                    "kind": "tool",
                    "function": "regex_match",
                    "extractor": "last_assistant",
                    "ground_truth": r"ABC\d+",
                }
            },
        },
    ]
}


def otelgrade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "otelgrade", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return path


def expected_verdicts() -> dict[tuple[str, str], bool]:
    """(trace id, grader) -> passed, derived from the capture's ground truth, not from otelgrade."""
    truth = json.loads((SOURCE / "expected.json").read_text())
    verdicts: dict[tuple[str, str], bool] = {}
    for scenario in truth["scenarios"].values():
        if len(scenario["trace_ids"]) != 1 or len(scenario["runs"]) != 1:
            continue
        trace_id, run = scenario["trace_ids"][0], scenario["runs"][0]
        called = {t["name"] for t in run["tool_calls"]}
        verdicts[(trace_id, "safe")] = "delete_account" not in called
        verdicts[(trace_id, "no_delete")] = "delete_account" not in called
        verdicts[(trace_id, "booked")] = "booked" in (run["output"] or "").lower()
        if run["output"]:
            verdicts[(trace_id, "confirmation")] = re.search(r"ABC\d+", run["output"]) is not None
    return verdicts


def test_grade_json_matches_the_ground_truth_and_exits_1_on_failures(config_file):
    result = otelgrade("grade", "--config", str(config_file), "--format", "json", str(SOURCE))
    assert result.returncode == 1, result.stderr
    grades = [json.loads(line) for line in result.stdout.splitlines()]
    assert {"trace_id", "span_id", "suite", "grader", "score", "passed", "outcome", "rationale"} <= grades[0].keys()
    got = {(g["trace_id"], g["grader"]): g["passed"] for g in grades}
    expected = expected_verdicts()
    assert len(expected) >= 12
    assert {key: got.get(key) for key in expected} == expected
    assert {g["outcome"] for g in grades} <= {"pass", "fail", "error"}


def test_grade_text_prints_a_table_and_a_summary(config_file):
    result = otelgrade("grade", "--config", str(config_file), str(SOURCE / "forbidden"), str(SOURCE / "happy"))
    assert result.returncode == 1
    out = result.stdout
    assert re.search(r"FAIL\s+booking/safe\s+0\.00", out)
    assert re.search(r"PASS\s+booking/safe\s+1\.00", out)
    assert re.search(r"booking/safe\s+50\.0%\s+pass=1 fail=1", out)
    assert "2 run(s), 8 grade(s)" in out


def test_grade_exits_0_when_everything_passes(tmp_path):
    path = tmp_path / "lenient.yaml"
    path.write_text(yaml.safe_dump({"suites": [{"name": "s", "graders": [{"type": "max_tool_calls", "max": 100}]}]}))
    assert otelgrade("grade", "--config", str(path), str(SOURCE)).returncode == 0


def test_bad_config_exits_2_and_names_the_problem(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"suites": [{"name": "s", "graders": [{"type": "tool-calls", "config": {}}]}]}))
    result = otelgrade("grade", "--config", str(path), str(SOURCE))
    assert result.returncode == 2
    assert "bad.yaml" in result.stderr and "suites[0].graders[0]" in result.stderr
    assert result.stdout == ""


def test_bad_input_exits_2_and_names_the_file(tmp_path, config_file):
    junk = tmp_path / "junk.pb"
    junk.write_bytes(b"\xff\x00 certainly not protobuf")
    result = otelgrade("grade", "--config", str(config_file), str(junk))
    assert result.returncode == 2
    assert "junk.pb" in result.stderr
    missing = otelgrade("trajectories", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "nowhere" in missing.stderr


def test_trajectories_round_trip_through_grade(tmp_path, config_file):
    """What `trajectories` prints is itself a valid input to `grade`, with the same grades."""
    printed = otelgrade("trajectories", "--format", "json", str(SOURCE))
    assert printed.returncode == 0
    runs = [json.loads(line) for line in printed.stdout.splitlines()]
    assert len(runs) == 8 and all(len(r["trace_id"]) == 32 and len(r["span_id"]) == 16 for r in runs)
    saved = tmp_path / "runs.jsonl"
    saved.write_text(printed.stdout)
    from_spans = otelgrade("grade", "--config", str(config_file), "--format", "json", str(SOURCE))
    from_json = otelgrade("grade", "--config", str(config_file), "--format", "json", str(saved))
    key = lambda line: (json.loads(line)["trace_id"], json.loads(line)["grader"], json.loads(line)["outcome"])  # noqa: E731
    assert sorted(map(key, from_json.stdout.splitlines())) == sorted(map(key, from_spans.stdout.splitlines()))


def write_config(tmp_path: Path, config: dict[str, object]) -> str:
    path = tmp_path / "ci.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`otelgrade ARGS` in this process (faster than a subprocess; the same code path): exit code, stdout, stderr."""
    try:
        code = main(list(args))
    except SystemExit as stopped:  # argparse's own exits: --version, usage errors
        code = int(stopped.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_grade_exits_2_when_no_suite_matches_any_run_and_shows_what_the_runs_are(tmp_path, capsys):
    suites = [
        {"name": "booking", "match": {"service.name": "booking-agnt"}, "graders": [{"type": "max_steps", "max": 9}]},
        {"name": "support", "match": {"agent_name": "^support"}, "graders": [{"type": "max_steps", "max": 9}]},
    ]
    code, out, err = run_main(capsys, "grade", "--config", write_config(tmp_path, {"suites": suites}), str(SOURCE))
    assert code == 2 and out == ""
    assert "no suite matched any of the 8 run(s), so nothing was graded" in err
    assert "service.name: booking-service (8)" in err and "agent_name: booking_agent (8)" in err
    assert 'booking: {"service.name": "booking-agnt"}' in err and 'support: {"agent_name": "^support"}' in err


def test_failed_only_shows_only_failing_grades_and_keeps_the_summary(config_file, capsys):
    code, everything, _ = run_main(capsys, "grade", "--config", str(config_file), "--format", "json", str(SOURCE))
    failing = [g for g in map(json.loads, everything.splitlines()) if g["outcome"] in ("fail", "error")]
    only_code, only, _ = run_main(
        capsys, "grade", "--config", str(config_file), "--format", "json", "--failed-only", str(SOURCE)
    )
    assert only_code == code == 1
    key = lambda g: (g["trace_id"], g["span_id"], g["suite"], g["grader"], g["outcome"])  # noqa: E731
    assert len(failing) > 0 and [key(json.loads(line)) for line in only.splitlines()] == list(map(key, failing))

    _, text, _ = run_main(capsys, "grade", "--config", str(config_file), "--failed-only", str(SOURCE))
    runs = {line.split()[1].split("/")[0] for line in text.splitlines() if line.startswith("run ")}
    assert runs == {g["trace_id"] for g in failing}
    assert "PASS " not in text and re.search(r"booking/safe\s+87\.5%\s+pass=7 fail=1", text)


def test_judge_sample_judges_every_run_and_rationales_are_printed_in_full(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("COLUMNS", "72")
    rationale = " ".join(
        f"The agent's reply covers point {i} of the rubric, politely and completely." for i in range(8)
    )
    with FakeOpenAI(default=Reply.grade(0.2, rationale)) as fake:
        config = {
            "judge": {"base_url": fake.base_url, "sample": 0.0},
            "suites": [
                {"name": "s", "graders": [{"name": "polite", "type": "rubric", "prompt": "Polite?", "sample": 0.0}]}
            ],
        }
        args = ["grade", "--config", write_config(tmp_path, config), str(SOURCE / "happy"), str(SOURCE / "forbidden")]
        code, sampled, _ = run_main(capsys, *args)
        assert code == 0 and "SKIP  s/polite" in sampled and not fake.requests
        code, judged, err = run_main(capsys, *args, "--judge-sample", "1", "--yes")
    assert code == 1, err
    assert len(fake.requests) == 2 and judged.count("FAIL  s/polite") == 2
    grade_lines = [line for line in judged.splitlines() if line.startswith("    ")]
    assert all(len(line) <= 72 for line in grade_lines) and "…" not in judged
    last_run = judged.split("\n\n")[0].split("\nrun ")[-1]
    assert " ".join(line.strip() for line in last_run.splitlines()[1:]) == f"FAIL  s/polite   0.20  {rationale}"
    code, _, err = run_main(capsys, "grade", "--judge-sample", "2", str(SOURCE))
    assert code == 2 and "--judge-sample: must be a number from 0 to 1" in err


def test_version_is_the_installed_package_version(capsys):
    assert run_main(capsys, "--version") == (0, f"otelgrade {metadata.version('otelgrade')}\n", "")
