"""Config loading: the embedded default, otelgrade's shape, and errors that name file, key and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from otelgrade.cli import main
from otelgrade.config import load_config, parse_config
from otelgrade.errors import ConfigError
from otelgrade.settings import parse_duration


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(text)
    return path


def test_embedded_default_loads_and_grades_every_run():
    config = load_config(None)
    assert config.suites and all(not s.match for s in config.suites)
    assert config.receivers.grpc.endswith(":4317") and config.receivers.http.endswith(":4318")
    assert config.assembly.settle == 2.0


def test_design_example_loads(tmp_path):
    path = write(
        tmp_path,
        """
receivers: {grpc: "127.0.0.1:4317", http: "127.0.0.1:4318"}
assembly: {settle: 500ms, idle_timeout: 30s, max_traces: 1000}
suites:
  - name: booking
    match: {service.name: booking-agent, agent_name: "^booking"}
    graders:
      - {name: safe, type: tools_not_called, tools: [delete_account]}
      - {name: efficient, type: max_tool_calls, max: 10}
sinks:
  - {type: jsonl, path: grades.jsonl}
""",
    )
    config = load_config(path)
    assert config.assembly.settle == 0.5
    assert [g.name for g in config.suites[0].graders] == ["safe", "efficient"]


@pytest.mark.parametrize(
    ("text", "path_in_message", "hint"),
    [
        ("assembly: {setle: 2s}", "assembly.setle", "unknown key"),
        ("assembly: {settle: soon}", "assembly.settle", "duration"),
        ("suites: [{name: s, graders: [{type: no_such_grader}]}]", "suites[0].graders[0].type", "known types"),
        ("suites: [{name: s, graders: [{type: max_tool_calls, max: lots}]}]", "suites[0].graders[0]", "lots"),
        ("suites: [{graders: []}]", "suites[0].name", "needs a `name`"),
        ("suites: [{name: a}, {name: a}]", "suites", "used twice"),
        ("suites: [{name: a, match: {agent_name: '^(unclosed'}}]", "suites[0].match.agent_name", "invalid regex"),
        ("sinks: [{type: jsonl}]", "sinks[0].path", "needs `path`"),
        ("- just\n- a list", "", "mapping"),
    ],
)
def test_errors_name_the_file_the_key_and_the_problem(tmp_path, text, path_in_message, hint):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message
    assert path_in_message in message
    assert hint in message


def test_invalid_yaml_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "suites: [unclosed"))


def test_durations():
    assert parse_duration("150ms") == 0.15
    assert parse_duration("10m") == 600
    assert parse_duration(3) == 3.0
    with pytest.raises(ValueError):
        parse_duration("two seconds")


def test_check_config_exit_codes(tmp_path, capsys):
    good = write(tmp_path, "suites: [{name: s, graders: [{type: max_tool_calls, max: 3}]}]")
    assert main(["check-config", str(good)]) == 0
    assert "ok (1 suite(s), 1 grader(s))" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("suites: [{name: s, graders: [{type: max_tool_calls, maximum: 3}]}]")
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "maximum" in err
    assert main(["check-config", str(tmp_path / "missing.yaml")]) == 2


def test_whole_native_files_become_one_suite():
    vally = parse_config(
        {
            "stimuli": [
                {"name": "s1", "prompt": "p", "graders": [{"type": "tool-calls", "config": {"required": ["search"]}}]}
            ]
        }
    )
    assert len(vally.suites) == 1 and vally.suites[0].graders[0].type == "vally.tool-calls"
    evaldeck = parse_config({"name": "book_flight", "input": "Book a flight", "expected": {"tools_called": ["search"]}})
    assert evaldeck.suites[0].name == "book_flight"
    assert evaldeck.suites[0].graders[0].type == "evaldeck.expected"


def test_prompt_path_is_relative_to_the_config_file(tmp_path, monkeypatch):
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "helpful.txt").write_text("Score {submission} for helpfulness.")
    path = write(tmp_path, "suites: [{name: s, graders: [{name: h, type: rubric, prompt_path: rubrics/helpful.txt}]}]")
    monkeypatch.chdir("/")
    spec = load_config(path).suites[0].graders[0]
    assert spec.params["prompt_path"] == str(tmp_path / "rubrics" / "helpful.txt")
