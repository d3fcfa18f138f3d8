"""letta-evals tool graders and extractors on real rebuilt traces and on hand-built conversations:
early exits, per-turn grading, memory blocks from attributes, custom grading functions, config shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import build_grader, grader_specs
from otelgrade.grade.graders.extractors import extract, split_turns
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "traces"


def fixture_run(scenario: str, source: str = "pydantic-ai-v5") -> tuple[Trajectory, dict[str, Any]]:
    """The first agent run of a captured scenario, rebuilt from its OTLP bodies, and its recorded facts."""
    spans = [
        s for f in sorted((FIXTURES / source / scenario).glob("*.pb")) for s in decode_traces(f.read_bytes()).spans
    ]
    facts = json.loads((FIXTURES / source / "expected.json").read_text())["scenarios"][scenario]["runs"][0]
    runs = [t for t in rebuild(spans) if t.input == facts["input"]]
    return runs[0], facts


def run(messages: list[dict[str, Any]], **fields: Any) -> Trajectory:
    return Trajectory(trace_id="1" * 32, span_id="2" * 16, messages=messages, **fields)


def grade(block: dict[str, Any], trajectory: Trajectory) -> Any:
    spec = grader_specs(block, "metric")[0]
    return build_grader(spec.type, spec.params)(trajectory)


def test_exact_match_on_a_real_trace_uses_the_final_answer():
    trajectory, facts = fixture_run("happy")
    block = {"kind": "tool", "function": "exact_match", "extractor": "last_assistant"}
    right = grade({**block, "ground_truth": f"  {facts['output']}\n"}, trajectory)
    wrong = grade({**block, "ground_truth": facts["output"].lower()}, trajectory)
    assert (right.score, right.outcome, right.rationale) == (1.0, "pass", "Exact match: True")
    assert (wrong.score, wrong.outcome) == (0.0, "fail")


def test_the_graders_own_ground_truth_wins_over_the_runs():
    trajectory, facts = fixture_run("happy")
    trajectory = trajectory.model_copy(update={"ground_truth": "something else"})
    block = {"kind": "tool", "function": "contains", "ground_truth": facts["output"].split()[-1]}
    assert grade(block, trajectory).score == 1.0
    assert grade({"kind": "tool", "function": "contains"}, trajectory).score == 0.0


def test_tool_arguments_and_output_of_the_first_call_on_a_real_trace():
    trajectory, facts = fixture_run("happy")
    first = facts["tool_calls"][0]
    args = extract(trajectory, "tool_arguments", {"tool_name": first["name"]})
    assert json.loads(args) == first["arguments"]
    assert extract(trajectory, "tool_output", {"tool_name": first["name"]}) == first["result"]
    assert extract(trajectory, "tool_arguments", {"tool_name": "never_called"}) == "{}"
    assert extract(trajectory, "tool_output", {"tool_name": "never_called"}) == ""


def test_early_exits_empty_run_and_empty_submission():
    block = {"kind": "tool", "function": "exact_match", "ground_truth": "{}", "extractor": "tool_arguments"}
    empty = grade({**block, "extractor_config": {"tool_name": "x"}}, run([]))
    assert (empty.score, empty.rationale) == (0.0, "Empty trajectory - agent produced no messages")
    # a tool that was never called extracts the literal "{}", which is graded (letta's behaviour)
    graded = grade({**block, "extractor_config": {"tool_name": "x"}}, run([{"role": "user", "content": "q"}]))
    assert graded.score == 1.0
    nothing = grade({"kind": "tool", "function": "ascii_printable_only"}, run([{"role": "user", "content": "q"}]))
    assert (nothing.score, nothing.rationale) == (0.0, "Empty submission - extractor found no content")


@pytest.mark.parametrize(
    ("function", "truth", "answer", "score"),
    [
        ("exact_match", "Paris", "\u00a0Paris\r\n", 1.0),
        ("exact_match", "   ", "   ", 1.0),
        ("contains", " Paris ", "Paris is nice", 0.0),
        ("contains", "οδος", "ΟΔΟΣ", 1.0),
        ("regex_match", "^Paris$", " Paris", 0.0),
        ("regex_match", "(", "anything", 0.0),
        ("regex_match", "^\\d+$", "٤٢", 1.0),
        ("ascii_printable_only", None, "\r", 1.0),
        ("ascii_printable_only", None, "tab\there", 0.0),
    ],
)
def test_builtin_functions_keep_letta_quirks(function, truth, answer, score):
    trajectory = run([{"role": "user", "content": "q"}, {"role": "assistant", "content": answer}], ground_truth=truth)
    assert grade({"kind": "tool", "function": function}, trajectory).score == score


def conversation() -> Trajectory:
    """Two turns told apart by user messages only (no `turn` keys), as a rebuilt trace gives them."""
    return run(
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "capital of France?"},
            {"role": "assistant", "content": "Paris"},
            {"role": "user", "content": "and Germany?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Berlin"},
            {"role": "assistant", "content": "FINAL: Berlin"},
        ],
        tool_calls=[ToolCall(name="lookup", call_id="c1", arguments={}, result="Berlin")],
        output="FINAL: Berlin",
    )


def test_turns_follow_user_messages_and_tool_calls_their_ids():
    turns = split_turns(conversation())
    assert [len(t.tool_calls) for t in turns] == [0, 1]
    assert [t.output for t in turns] == ["Paris", "FINAL: Berlin"]
    assert extract(conversation(), "last_turn") == "FINAL: Berlin"
    assert extract(conversation(), "all_assistant", {"separator": "|"}) == "Paris|FINAL: Berlin"
    assert extract(conversation(), "after_marker", {"marker": "FINAL:"}) == "Berlin"


def test_a_list_ground_truth_grades_turn_by_turn():
    result = grade({"kind": "tool", "function": "contains", "ground_truth": ["paris", "rome", "x"]}, conversation())
    assert result.score == pytest.approx(1 / 3)
    assert result.rationale == "1/3 passed: ✓ ✗ ✗"
    assert result.metadata["submission"] == "[Turn 0] Paris | [Turn 1] FINAL: Berlin | [Turn 2] "
    assert result.outcome == "fail"


def test_pattern_extractor_scans_newest_first_and_indexes_groups_like_letta():
    trajectory = run(
        [
            {"role": "assistant", "content": "Answer: 41 then 42"},
            {"role": "assistant", "content": "Final answer: 7 and 8"},
        ]
    )
    assert extract(trajectory, "pattern", {"pattern": r"Answer: (\d+)", "group": 1}) == "41"
    assert extract(trajectory, "pattern", {"pattern": r"(\d+)( and)?", "search_all": True, "group": 0}) == "7 8"
    assert extract(trajectory, "pattern", {"pattern": r"\d+", "search_all": True}) == "7 8"


@pytest.mark.parametrize(
    "config",
    [
        {"extractor": "pattern", "extractor_config": {}},
        {"extractor": "pattern", "extractor_config": {"pattern": "("}},
        {"extractor": "pattern", "extractor_config": {"pattern": r"\d+", "group": 2}},
        {"extractor": "tool_arguments", "extractor_config": {}},
        {"extractor": "memory_block", "extractor_config": {}},
        {"extractor": "json"},
        {"function": "no_such_function"},
    ],
)
def test_bad_extractor_or_function_configs_fail_at_load_time(config):
    with pytest.raises(ConfigError):
        grader_specs({"kind": "tool", "function": "exact_match", **config}, "metric")


def test_memory_blocks_come_from_run_attributes():
    block = {"kind": "tool", "function": "contains", "extractor": "memory_block", "ground_truth": "ada"}
    messages = [{"role": "assistant", "content": "ok"}]
    remembered = run(messages, attributes={"letta.memory.human": "Name: Ada"})
    assert grade({**block, "extractor_config": {"block_label": "human"}}, remembered).score == 1.0
    assert grade({**block, "extractor_config": {"block_label": "Human"}}, remembered).score == 0.0
    missing = grade({**block, "extractor_config": {"block_label": "human"}}, run(messages))
    assert missing.outcome == "error" and not missing.passed


def test_custom_grading_function_loaded_from_a_module_file(tmp_path):
    module = tmp_path / "my_graders.py"
    module.write_text(
        "import json\n"
        "from otelgrade import custom_grader\n\n"
        "@custom_grader\n"
        "def has_field(sample, submission):\n"
        "    data = json.loads(submission)\n"
        "    return (1.0, 'has it') if sample.ground_truth in data else (0.0, 'missing')\n"
    )
    trajectory, facts = fixture_run("happy")
    first = facts["tool_calls"][0]
    block = {
        "kind": "tool",
        "function": "has_field",
        "module": str(module),
        "extractor": "tool_arguments",
        "extractor_config": {"tool_name": first["name"]},
    }
    field = next(iter(first["arguments"]))
    assert grade({**block, "ground_truth": field}, trajectory).rationale == "has it"
    assert grade({**block, "ground_truth": "nope"}, trajectory).score == 0.0
    crashed = grade({**block, "ground_truth": field, "extractor": "last_assistant"}, trajectory)
    assert crashed.outcome == "error"  # the function raised on a non-JSON submission
    with pytest.raises(ConfigError, match="not registered"):
        grader_specs({**block, "function": "not_there"}, "metric")


def test_a_whole_letta_suite_file_loads_as_one_suite():
    config = parse_config(
        {
            "name": "qa",
            "dataset": "data.jsonl",
            "graders": {
                "accuracy": {"kind": "tool", "function": "exact_match", "extractor": "last_assistant"},
                "args": {
                    "kind": "tool",
                    "function": "contains",
                    "extractor": "tool_arguments",
                    "extractor_config": {"tool_name": "search"},
                },
            },
        }
    )
    (suite,) = config.suites
    assert [(g.name, g.type) for g in suite.graders] == [("accuracy", "letta.exact_match"), ("args", "letta.contains")]
