"""Config loading: the embedded default, otelgrade's shape, and errors that name file, key and fix."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from otelgrade.cli import main
from otelgrade.config import load_config, parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.settings import parse_duration


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
        (
            "suites: [{name: s, graders: [{type: max_tool_calls, max: 3, threshold: 2}]}]",
            "suites[0].graders[0].threshold",
            "between 0 and 1",
        ),
        (
            "suites: [{name: s, graders: {helpful: {kind: rubric, prompt: p, threshold: -1}}}]",
            "suites[0].graders.helpful.threshold",
            "between 0 and 1",
        ),
        ("suites: [{name: s, graders: []}]", "suites[0].graders", "suite 's' has no graders"),
        ("suites: [{name: s}]", "suites[0].graders", "suite 's' has no graders"),
        (
            "suites: [{name: s, graders: [{type: all_of, graders: ["
            "{type: max_steps, max: 2}, {type: max_steps, max: x}]}]}]",
            "suites[0].graders[0].graders[1].max",
            "got 'x'",
        ),
        ("sinks: [{type: jsonl, path: a.jsonl}, {type: nope}]", "sinks[1].type", "unknown sink type"),
        ("judge: {budget: {usd: -1}}", "judge.budget.usd", "greater than 0"),
        ("suites: [{name: s, graders: [{type: max_tool_calls, max: lots}]}]", "suites[0].graders[0]", "lots"),
        ("suites: [{graders: []}]", "suites[0].name", "needs a `name`"),
        (
            "suites: [{name: a, graders: [{type: max_steps, max: 2}]}, "
            "{name: a, graders: [{type: max_steps, max: 2}]}]",
            "suites",
            "used twice",
        ),
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


def test_invalid_yaml_names_the_file_and_the_line(tmp_path):
    path = write(tmp_path, "suites:\n  - name: s\n    graders: [{type: max_steps, max: 2}\n  - name: t\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not valid YAML at line 4, column ")
    assert "flow sequence that starts at line 3" in message and "<unicode string>" not in message
    with pytest.raises(ConfigError, match=r"line 2, column 1: .*spaces, not tabs"):
        load_config(write(tmp_path, "suites:\n\t- name: s\n"))


SUITE = "suites: [{{name: s, {match}graders: [{grader}]}}]"


def load_suite(tmp_path: Path, grader: str = "{type: max_steps, max: 2}", match: str = "") -> ConfigError | None:
    try:
        load_config(write(tmp_path, SUITE.format(grader=grader, match=f"match: {{{match}}}, " if match else "")))
    except ConfigError as exc:
        return exc
    return None


def test_a_misspelled_match_key_is_an_error_with_the_right_spelling(tmp_path):
    for typo, meant in [
        ("servce.name", "service.name"),
        ("Service.Name", "service.name"),
        ("agent_nme", "agent_name"),
        ("gen_ai.agnet.name", "gen_ai.agent.name"),
        ("stauts", "status"),
    ]:
        error = load_suite(tmp_path, match=f"{typo}: x")
        assert error is not None and error.path == f"suites[0].match.{typo}", typo
        assert f"did you mean `{meant}`?" in error.message
    # Attribute names of the user's own, and well-known ones close to each other, are taken as written.
    custom = "team: payments, tenant: acme, gen_ai.agent.id: a1, deployment.environment: prod, app.tier: web"
    assert load_suite(tmp_path, match=custom) is None


def test_an_unknown_prompt_placeholder_is_an_error(tmp_path):
    error = load_suite(tmp_path, grader="{type: rubric, prompt: 'Is {submision} polite?'}")
    assert error is not None and error.path == "suites[0].graders[0].prompt"
    assert "unknown placeholder {submision}" in error.message and "did you mean `{submission}`?" in error.message
    assert "{input}, {submission}, {ground_truth}, {trajectory}" in error.message
    (tmp_path / "rubric.txt").write_text("Score {answer} against {ground_truth}.")
    error = load_suite(tmp_path, grader="{type: trajectory_judge, prompt_path: rubric.txt}")
    assert error is not None and error.path == "suites[0].graders[0].prompt_path"
    assert "unknown placeholder {answer} in prompt file" in error.message and "rubric.txt" in error.message
    # Braces that are not a `{name}` (a JSON example) are text.
    assert load_suite(tmp_path, grader="""{type: rubric, prompt: 'Answer like {"score": 1}: {submission}'}""") is None


def test_per_turn_refuses_a_judge_when_the_config_loads(tmp_path):
    """A judge in a turn, even inside `all_of`, is refused at load: before, it was accepted and then spent a paid
    judge call on every run only to grade `error`."""
    judge = "{type: rubric, prompt: 'Polite? {submission}'}"
    turns = "[[{type: output_contains, values: hello}], [{type: all_of, graders: [" + judge + "]}]]"
    error = load_suite(tmp_path, grader="{type: per_turn, turns: " + turns + "}")
    assert error is not None and "per_turn takes code graders only" in error.message and "turns[1]" in error.message
    negated = "{type: not, grader: {type: output_contains, values: bye}}"
    code_only = "[[{type: output_contains, values: hello}], [" + negated + "]]"
    assert load_suite(tmp_path, grader="{type: per_turn, turns: " + code_only + "}") is None


def test_an_unknown_grader_type_suggests_the_closest_and_lists_plain_names_first(tmp_path):
    error = load_suite(tmp_path, grader="{type: tool_not_called, tools: [x]}")
    assert error is not None and error.path == "suites[0].graders[0].type"
    assert "(did you mean `tools_not_called`" in error.message
    known = error.message.split("known types: ")[1].split(", ")
    assert {"tools_not_called", "max_tool_calls", "rubric"} <= set(known)
    assert {"potato.contains", "vally.output-matches", "evaldeck.tool_not_called"} <= set(known)
    assert not {"contains", "output-matches", "tool-calls"} & set(known), "deprecated spellings are not offered"
    plain = [n for n in known if "." not in n]
    assert known[: len(plain)] == plain


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


def test_a_jsonl_sink_path_is_relative_to_the_config_file(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "otelgrade.yaml").write_text("sinks: [{type: jsonl, path: out/grades.jsonl}]")
    monkeypatch.chdir(tmp_path)
    config = load_config("conf/otelgrade.yaml")
    assert config.sinks[0].path == str(tmp_path / "conf" / "out" / "grades.jsonl")
    (tmp_path / "conf" / "otelgrade.yaml").write_text("sinks: [{type: jsonl, path: /var/log/grades.jsonl}]")
    assert load_config("conf/otelgrade.yaml").sinks[0].path == "/var/log/grades.jsonl"


def test_prompt_path_is_relative_to_the_config_file(tmp_path, monkeypatch):
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "helpful.txt").write_text("Score {submission} for helpfulness.")
    path = write(tmp_path, "suites: [{name: s, graders: [{name: h, type: rubric, prompt_path: rubrics/helpful.txt}]}]")
    monkeypatch.chdir("/")
    judge = load_config(path).suites[0].graders[0].build()
    assert judge.grader.judgement.template == "Score {submission} for helpfulness."


def test_every_listener_defaults_to_localhost():
    for config in (load_config(None), parse_config({})):
        addresses = [*config.receiver_addresses().values(), config.metrics.endpoint]
        assert addresses and all(address.startswith("localhost:") for address in addresses)


@pytest.mark.parametrize(
    ("text", "path_in_message", "hint"),
    [
        ("receivers: {tls: {cert_file: nope.pem, key_file: k.pem}}", "receivers.tls.cert_file", "cannot read"),
        ("receivers: {tls: {cert_file: token, key_file: token}}", "receivers.tls", "PEM"),
        ("receivers: {auth: {bearer_token_file: empty}}", "receivers.auth", "is empty"),
        ("receivers: {auth: {token: abc}}", "receivers.auth", "bearer_token_file"),
        ("metrics: {auth: {bearer_token_file: missing}}", "metrics.auth.bearer_token_file", "cannot read"),
    ],
)
def test_tls_and_auth_errors_name_the_key_and_the_file(tmp_path, text, path_in_message, hint):
    (tmp_path / "token").write_text("s3cret\n")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path, text))
    assert path_in_message in str(error.value) and hint in str(error.value)


def test_the_token_file_is_read_from_the_config_folder(tmp_path, monkeypatch):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text("s3cret\n")
    path = write(tmp_path, "receivers: {auth: {bearer_token_file: secrets/token}}\nmetrics: {endpoint: null}")
    monkeypatch.chdir("/")
    auth = load_config(path).receivers.auth
    assert auth is not None and auth.token() == "s3cret"


ALIAS_BOMB = (
    "suites:\n  - name: bomb\n    graders: [{type: max_tool_calls, max: 5}]\n    match:\n"
    + "".join(
        f"      tier.{name}: &{name} [{', '.join([f'*{inner}' if inner else 'lol'] * 9)}]\n"
        for inner, name in zip(["", "a", "b", "c", "d", "e"], "abcdef", strict=True)
    )
    + "      agent_name: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
)  # about nine to the seventh nodes once written out


def check_config(path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "otelgrade", "check-config", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_check_config_refuses_yaml_aliases_that_write_out_too_much(tmp_path):
    assert len(ALIAS_BOMB) < 600
    began = time.monotonic()
    checked = check_config(write(tmp_path, ALIAS_BOMB))
    assert (
        checked.returncode == 2
        and "YAML aliases" in checked.stderr
        and "write the repeated blocks out" in checked.stderr
    )
    assert time.monotonic() - began < 10
    endless = check_config(write(tmp_path, "suites: &s [{name: s, graders: [{type: max_steps, max: 2}], x: *s}]\n"))
    assert endless.returncode == 2 and "refers to a block that contains it" in endless.stderr


def test_yaml_aliases_that_share_a_block_still_load(tmp_path):
    text = """
suites:
  - name: a
    graders: &shared [{type: max_tool_calls, max: 10}, {type: max_steps, max: 20}]
  - name: b
    match: {agent_name: "^b"}
    graders: *shared
"""
    checked = check_config(write(tmp_path, text))
    assert checked.returncode == 0, checked.stderr
    assert "2 suite(s), 4 grader(s)" in checked.stdout
