"""vally graders as a user configures them (`{type, config}` blocks, or a whole vally eval spec), and the
JavaScript regex dialect their patterns use."""

from __future__ import annotations

from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import LLMCall, ToolCall, Trajectory
from otelgrade.grade.graders import build_grader
from otelgrade.grade.graders.jsregex import JsRegexError, compile_js, compile_prefixed, js_stringify
from otelgrade.grade.graders.names import collecting


def run(*calls: tuple[str, Any, int], output: str = "done", result: str | None = "ok", **fields: Any) -> Trajectory:
    return Trajectory(
        trace_id="1" * 32,
        span_id="2" * 16,
        output=output,
        tool_calls=[ToolCall(name=n, arguments=a, step=s, result=result) for n, a, s in calls],
        **fields,
    )


def grade(type_name: str, config: dict[str, Any], trajectory: Trajectory) -> Any:
    [suite] = parse_config({"suites": [{"name": "s", "graders": [{"type": type_name, "config": config}]}]}).suites
    [spec] = suite.graders
    return build_grader(spec.type, spec.params)(trajectory)


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("42$", "42\n", False),  # JS `$` is the very end
        ("(?m)42$", "42\r\nx", True),  # ... or before any line terminator with m
        (r"^\d+$", "٤٢", False),  # ASCII \d
        (r"\w", "é", False),
        (r"\s", "\ufeff", True),  # JS \s includes the BOM
        ("a.b", "a\u2028b", False),
        ("(?s)a.b", "a\u2028b", True),
        ("(?i)^BASH$", "bash", True),
        ("^.$", "😀", False),  # strings are UTF-16 code units
        (r"[^\D]", "7", True),
        (r"\A", "A", True),  # an identity escape, not Python's start anchor
        ("a{,2}", "a{,2}", True),  # not a quantifier in JS
        ("[]", "x", False),
        (r"(?<w>o)\k<w>", "foo", True),
    ],
)
def test_javascript_regex_semantics(pattern: str, text: str, matches: bool) -> None:
    assert compile_prefixed(pattern).test(text) is matches


@pytest.mark.parametrize("pattern", ["(", "a**", "a++", "(?P<n>x)", "x(?i)y", "(?x)a", "[b-a]"])
def test_patterns_javascript_rejects(pattern: str) -> None:
    with pytest.raises(JsRegexError):
        compile_prefixed(pattern)


def test_flags_and_stringify() -> None:
    assert compile_js("^b", "m").test("a\nb")
    assert js_stringify({"b": 1.0, "10": [True, None, 1e-7], "2": "é\n"}) == '{"2":"é\\n","10":[true,null,1e-7],"b":1}'


def test_tool_calls_required_disallowed_sequence() -> None:
    trajectory = run(
        ("validate_input", {}, 0),
        ("bash", {"command": "npm test -- --watch"}, 1),
        ("create_file", {"path": "src/a.ts"}, 1),
        ("report_result", {"count": 5}, 2),
    )
    passing = {
        "required": ["create", {"name": "bash", "command": "npm test"}, {"name": "^report_result$", "final": True}],
        "disallowed": [{"name": "view", "path": r"\.env$"}, "^rm$"],
        "sequence": ["^validate_", "^create_"],
    }
    assert grade("tool-calls", passing, trajectory).passed
    failing = [
        {"required": [{"name": "bash", "command": "^npm run build"}]},
        {"required": [{"name": "^bash$", "min_count": 2}]},
        {"required": [{"name": "create", "final": True}]},
        {"required": [{"name": "report", "args": {"count": "5"}}]},  # only string arguments are matchable
        {"disallowed": ["rm"]},  # no call name contains "rm"
        {"sequence": ["create", "validate"]},
        {"sequence": ["bash", "bash"]},  # repeated entries need distinct calls
        {"required": [{"name": "bash", "result": "^FAILED"}]},
    ]
    verdicts = [grade("tool-calls", config, trajectory).passed for config in failing]
    assert verdicts == [False, False, False, False, True, False, False, False]
    assert grade("tool-calls", {"required": [{"name": "report", "pattern": '"count":5'}]}, trajectory).passed


def test_positional_constraints_count_steps_from_the_first_model_response() -> None:
    calls = (("plan", {}, 1), ("act", {}, 2))
    llm = [LLMCall(step=1), LLMCall(step=2), LLMCall(step=3)]
    one_based = run(*calls, llm_calls=llm)
    assert grade("tool-calls", {"required": [{"name": "plan", "at_step": 0}]}, one_based).passed
    assert not grade("tool-calls", {"required": [{"name": "act", "before_step": 1}]}, one_based).passed
    zero_based = run(("plan", {}, 0), ("act", {}, 1))
    assert grade("tool-calls", {"required": [{"name": "act", "at_step": 1, "before_step": 2}]}, zero_based).passed


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({}, "required"),
        ({"required": []}, "required"),
        ({"disallowed": [{"name": "x", "min_count": 2}]}, "disallowed[0].min_count"),
        ({"sequence": [{"name": "x", "at_step": 0}]}, "sequence[0].at_step"),
        ({"sequence": [{"name": "x", "result": "ok"}]}, "sequence[0].result"),
        ({"required": [{"name": "x", "before_step": 0}]}, "required[0].before_step"),
        ({"required": [{"name": "x", "at_step": 2, "before_step": 2}]}, "required[0]"),
        ({"required": [{"command": "x"}]}, "required[0].name"),
        ({"required": [{"name": "x", "cmd": "y"}]}, "required[0]"),
        ({"required": [{"name": "x", "args": {"q": "("}}]}, "required[0].args.q"),
    ],
)
def test_tool_calls_config_errors_name_the_key(config: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        grade("tool-calls", config, run())
    assert key in str(err.value)


def test_output_and_transcript_graders() -> None:
    chat = run(
        output="Booked.",
        messages=[
            {"role": "assistant", "content": "Could you clarify the date?"},
            {"role": "assistant", "content": "Booked."},
        ],
    )
    assert grade("output-contains", {"substring": "BOOKED"}, chat).passed
    assert not grade("output-contains", {"substring": "BOOKED", "case_sensitive": True}, chat).passed
    assert grade("output-not-contains", {"substring": "clarify"}, chat).passed
    assert grade("transcript-contains", {"substring": "clarify"}, chat).passed
    assert not grade("transcript-not-contains", {"substring": "clarify"}, chat).passed
    assert not grade("transcript-not-contains", {"substring": "clarify"}, run(output="Booked.")).passed  # no messages
    assert grade("output-matches", {"pattern": "(?i)^booked\\.$"}, chat).passed
    assert grade("output-not-matches", {"pattern": "error|exception"}, chat).passed


def test_budgets_score_how_far_over() -> None:
    five = run(*((f"t{i}", {}, i) for i in range(5)))
    assert grade("tool-call-count", {"max": 5}, five).score == 1.0
    assert grade("tool-call-count", {"max": 4}, five).score == pytest.approx(0.75)
    assert grade("tool-call-count", {"max": 0}, five).score == 0.0
    assert grade("tool-call-count", {"max": 1, "tools": ["^t[01]$"]}, five).score == 0.0
    assert grade("tool-call-count", {"max": 2, "tools": ["^t[01]$"]}, five).passed
    with pytest.raises(ConfigError, match="max"):
        grade("tool-call-count", {"max": -1}, five)
    tokens = run(llm_calls=[LLMCall(input_tokens=600, output_tokens=100), LLMCall(input_tokens=300)])
    assert grade("token-budget", {"max": 1000}, tokens).passed
    assert not grade("token-budget", {"max": 900}, tokens).passed


def test_completed_and_skills() -> None:
    assert grade("completed", {}, run(messages=[{"role": "assistant", "content": "done"}])).passed
    assert not grade("completed", {}, run(output="", messages=[{"role": "assistant", "content": ""}])).passed
    assert not grade("completed", {}, run(steps=1, status="error")).passed
    skills = run(("load_skill", {"name": "code-review"}, 0))
    assert grade("skill-invocation", {"required": ["code-review"]}, skills).passed
    assert not grade("skill-invocation", {"disallowed": ["code-review"]}, skills).passed
    with pytest.raises(ConfigError, match="both required and disallowed"):
        grade("skill-invocation", {"required": ["a"], "disallowed": ["a"]}, skills)


def test_max_repeat() -> None:
    looping = run(("poll", {"id": 1}, 0), ("poll", {"id": 1}, 1), ("poll", {"id": 2}, 2), result="pending")
    assert not grade("max-repeat", {"max": 2}, looping).passed  # same tool, same observation, 3 in a row
    assert grade("max-repeat", {"max": 2, "match": "name-args"}, looping).passed


def test_a_vally_eval_spec_loads_as_one_suite_per_stimulus() -> None:
    spec = {
        "name": "coding",
        "stimuli": [
            {"name": "a", "prompt": "fix it", "graders": [{"type": "tool-calls", "config": {"required": ["edit"]}}]},
            {
                "name": "b",
                "prompt": "test it",
                "graders": [
                    {"type": "tool-calls", "config": {"required": ["pytest"]}},
                    {"type": "output-contains", "config": {"substring": "ok"}, "name": "says-ok"},
                ],
            },
        ],
    }
    suites = parse_config(spec).suites
    assert [(s.name, [(g.type, g.name) for g in s.graders]) for s in suites] == [
        ("a", [("vally.tool-calls", "tool-calls")]),
        ("b", [("vally.tool-calls", "tool-calls"), ("vally.output-contains", "says-ok")]),
    ]


def test_an_absence_only_tool_calls_grader_passes_a_run_with_no_tool_calls() -> None:
    # vally 0.19 (release notes, #1325): tool-calls with only `disallowed` grades an empty agent scope, a pass
    verdict = grade("tool-calls", {"disallowed": ["^rm$"]}, run())
    assert verdict.outcome == "pass"
    assert grade("tool-calls", {"disallowed": ["^rm$"]}, run(("rm", {}, 0))).outcome == "fail"


def test_error_count_counts_the_tool_failures_the_producer_reported() -> None:
    # vally 0.17 (release notes, #1225): a tool result the producer recorded as failed is a failure, not a success
    failed = Trajectory(
        trace_id="1" * 32,
        span_id="2" * 16,
        output="done",
        tool_calls=[ToolCall(name="search", step=0, result="boom", error=True), ToolCall(name="book", step=1)],
    )
    assert grade("error-count", {"max": 0}, failed).passed is False
    assert grade("error-count", {"max": 1}, failed).passed is True


def test_a_vally_019_eval_spec_with_a_scoring_timeout_loads_without_deprecation_warnings() -> None:
    spec = {
        "name": "booking",
        "scoring": {"threshold": 0.8, "timeout": "5m"},  # vally 0.19 (#1179): one grading budget per trial
        "stimuli": [
            {"name": "book", "prompt": "book", "graders": [{"type": "output-matches", "config": {"pattern": "ok$"}}]}
        ],
    }
    with collecting() as deprecated:
        [suite] = parse_config(spec).suites
    assert [g.type for g in suite.graders] == ["vally.output-matches"] and deprecated == []
