"""Every example config on Potato's programmatic-evaluators page and vally's tool-calls page loads as written
and grades real captured agent runs (rebuilt from the OTLP fixtures) as the page says it should."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
import yaml

from otelgrade.config import parse_config
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import build_grader
from otelgrade.tools.offline import read_inputs
from tests.paths import FIXTURES

TRACES = FIXTURES / "traces"
SOURCE = "pydantic-ai-v5"


@cache
def captured(scenario: str) -> Trajectory:
    [trajectory] = list(read_inputs([TRACES / SOURCE / scenario]))
    return trajectory


def gold_messages(scenario: str) -> list[dict[str, Any]]:
    """What the scripted agent really did in `scenario` (expected.json), as an OpenAI message list."""
    [run] = json.loads((TRACES / SOURCE / "expected.json").read_text())["scenarios"][scenario]["runs"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": run["input"]}]
    for i, call in enumerate(run["tool_calls"]):
        function = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        messages.append(
            {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function", "function": function}]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": call["result"]})
    messages.append({"role": "assistant", "content": run["output"]})
    return messages


def grade_block(block: dict[str, Any], trajectory: Trajectory) -> Any:
    [suite] = parse_config({"suites": [{"name": "docs", "graders": [block]}]}).suites
    [spec] = suite.graders
    return build_grader(spec.type, spec.params)(trajectory)


# --- Potato: https://www.potatoannotator.com/docs/agent-evaluation/programmatic-evaluators ----------

TRAJECTORY_MATCH = {
    "name": "trajectory_match",
    "params": {
        "mode": "unordered",
        "tool_args_match_mode": "subset",
        "tool_args_match_overrides": {"search": "ignore"},
    },
}


@pytest.mark.parametrize("scenario", ["happy", "forbidden", "parallel", "many_calls"])
def test_potato_trajectory_match_example(scenario: str) -> None:
    """`unordered`: same multiset of tool calls, any order — the run against its own gold passes, against
    another scenario's gold fails."""
    run = captured(scenario)
    own = run.model_copy(update={"ground_truth": gold_messages(scenario)})
    assert grade_block(TRAJECTORY_MATCH, own).passed
    other = run.model_copy(update={"ground_truth": gold_messages("tool_error")})
    assert not grade_block(TRAJECTORY_MATCH, other).passed


def test_potato_trajectory_match_modes_table() -> None:
    happy = captured("happy")  # search_flights then book_flight
    reference = [{"role": "assistant", "tool_calls": [{"name": "book_flight", "arguments": {"flight_id": "UA123"}}]}]
    with_ref = happy.model_copy(update={"ground_truth": reference})
    verdicts = {
        mode: grade_block({"name": "trajectory_match", "params": {"mode": mode}}, with_ref).passed
        for mode in ("strict", "unordered", "subset", "superset")
    }
    # strict/unordered need identical calls; subset fails (search_flights is not in the reference);
    # superset passes (the reference call was made, extras allowed).
    assert verdicts == {"strict": False, "unordered": False, "subset": False, "superset": True}


def test_potato_tool_use_examples() -> None:
    assert not grade_block(
        {"name": "tool_use", "params": {"expected_tool": "submit", "expected_args": {"id": 1}}}, captured("happy")
    ).passed
    result = grade_block(
        {"name": "tool_use", "params": {"expected_tool": "book_flight", "expected_args": {"flight_id": "UA123"}}},
        captured("happy"),
    )
    assert result.passed


def test_potato_tool_call_accuracy_example() -> None:
    """ "What fraction of reference tool calls did the agent reproduce? (partial credit)"."""
    block = {"name": "tool_call_accuracy", "params": {"args_match_mode": "exact"}}
    happy = captured("happy")
    assert grade_block(block, happy.model_copy(update={"ground_truth": gold_messages("happy")})).score == 1.0
    forbidden_gold = happy.model_copy(update={"ground_truth": gold_messages("forbidden")})
    assert grade_block(block, forbidden_gold).score == 0.0  # same tools, different arguments
    ignore = {"name": "tool_call_accuracy", "params": {"args_match_mode": "ignore"}}
    assert grade_block(ignore, forbidden_gold).score == 0.5  # search_flights reproduced, delete_account not


def test_potato_build_evaluator_example() -> None:
    """`build_evaluator("trajectory_match", {"mode": "unordered"})`, as an experiment's YAML says it."""
    config = parse_config(yaml.safe_load("evaluators:\n  - name: trajectory_match\n    params: {mode: unordered}\n"))
    [spec] = config.suites[0].graders
    grade = build_grader(spec.type, spec.params)
    parallel = captured("parallel")
    assert grade(parallel.model_copy(update={"ground_truth": list(reversed(gold_messages("parallel")))})).passed


def test_potato_heuristic_evaluators_on_a_real_answer() -> None:
    happy = captured("happy")
    assert grade_block({"name": "exact_match", "params": {"ground_truth": happy.output}}, happy).passed
    assert grade_block({"name": "contains", "params": {"substring": "ua123"}}, happy).passed
    assert grade_block({"name": "regex_match", "params": {"pattern": r"Confirmation: [A-Z0-9]+"}}, happy).passed
    assert grade_block({"name": "edit_distance", "params": {"ground_truth": happy.output}}, happy).score == 1.0
    assert not grade_block({"name": "json_valid", "params": {}}, happy).passed
    assert not grade_block({"name": "json_schema_match", "params": {"schema": {"type": "object"}}}, happy).passed


# --- vally: https://microsoft.github.io/vally/reference/graders/tool-calls/ ---------------------------

VALLY_PAGE = """
graders:
  - type: tool-calls
    config:
      required:
        - create
        - name: bash
          command: "npm test"
      disallowed:
        - name: view
          path: "secret\\\\.env$"
      sequence:
        - name: validate
        - name: create
"""

USE_CASES = """
- type: tool-calls
  config: {required: [create]}
- type: tool-calls
  config: {required: [{name: bash, command: "npm test"}]}
- type: tool-calls
  config: {required: [{name: "^(bash|powershell)$"}]}
- type: tool-calls
  config: {disallowed: [{name: view, path: "\\\\.env$"}]}
- type: tool-calls
  config: {required: [{name: edit, path: "src/.*\\\\.ts$"}], disallowed: [{name: bash, command: "rm -rf"}]}
- type: tool-calls
  config: {sequence: [{name: "^validate_.*"}, {name: "^(create|update)_.*"}]}
- type: tool-calls
  config: {required: [{name: "^load_skill$", before_step: 3}]}
- type: tool-calls
  config: {required: [{name: "^validate$", at_step: 0}]}
- type: tool-calls
  config: {required: [{name: "^upload$", min_count: 2}]}
- type: tool-calls
  config: {required: [{name: "^web_search$", args: {query: "release notes"}}]}
- type: tool-calls
  config: {required: [{name: "^bash$", command: "npm run build", result: "BUILD SUCCEEDED"}]}
- type: tool-calls
  config: {required: [{name: "^report_result$", final: true}]}
"""


def test_vally_page_config_loads_and_fails_a_run_without_the_required_tools() -> None:
    [block] = yaml.safe_load(VALLY_PAGE)["graders"]
    assert block["config"]["disallowed"][0]["path"] == "secret\\.env$"
    result = grade_block(block, captured("happy"))
    assert not result.passed and "create" in result.rationale


@pytest.mark.parametrize("index", range(12))
def test_vally_use_cases_load_and_grade_the_booking_agent(index: int) -> None:
    """The booking agent never calls the page's coding tools: every `required` example fails on it, the
    `disallowed`-only example passes."""
    block = yaml.safe_load(USE_CASES)[index]
    for scenario in ("happy", "many_calls"):
        result = grade_block(block, captured(scenario))
        assert result.passed is (set(block["config"]) == {"disallowed"}), (block, result.rationale)


# The same rules on the booking agent's own tools: the captured runs in the roles of the page's examples.
BOOKING = [
    ({"required": ["search"]}, "happy", True),
    ({"required": [{"name": "^book_flight$", "args": {"flight_id": "UA123"}}]}, "happy", True),
    ({"required": [{"name": "^book_flight$", "final": True}]}, "happy", True),
    ({"required": [{"name": "^search_flights$", "final": True}]}, "happy", False),
    ({"required": [{"name": "^search_flights$", "at_step": 0}]}, "happy", True),
    ({"required": [{"name": "^book_flight$", "before_step": 1}]}, "happy", False),
    ({"required": [{"name": "^book_flight$", "result": "booked"}]}, "happy", True),
    ({"required": [{"name": "^lookup$", "min_count": 7}]}, "many_calls", True),
    ({"required": [{"name": "^lookup$", "min_count": 8}]}, "many_calls", False),
    ({"sequence": ["^search_", "^book_"]}, "happy", True),
    ({"sequence": ["^book_", "^search_"]}, "happy", False),
    ({"disallowed": ["^delete_account$"]}, "happy", True),
    ({"disallowed": ["^delete_account$"]}, "forbidden", False),
    ({"required": [{"name": "^get_weather$", "at_step": 0, "min_count": 2}]}, "parallel", True),
]


@pytest.mark.parametrize(("config", "scenario", "passed"), BOOKING)
def test_vally_rules_on_captured_runs(config: dict[str, Any], scenario: str, passed: bool) -> None:
    result = grade_block({"type": "tool-calls", "config": config}, captured(scenario))
    assert result.passed is passed, result.rationale
