"""Regular expressions cannot run away: a pattern that backtracks without end, from a span's ground truth or from
a config, grades `error` (reason `regex_timeout`) within its time budget, and the server keeps answering."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otelgrade.core.patterns import budget
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import build_grader, grade_safely
from otelgrade.grade.route import match_filter
from tests.conftest import ServeProcess

Serve = Callable[..., ServeProcess]

RUNAWAY = "^(a|a)+$"  # exponential for any backtracking engine, `regex` included
HOSTILE = "a" * 40 + "!"
SHORT_BUDGET = 0.2  # in-process tests narrow the budget: the same verdict as with a full second, sooner


def send_run(server: ServeProcess, ground_truth: str, answer: str, nested: int = 0) -> str:
    """One GenAI agent run whose answer and ground truth travel as span attributes, sent by the SDK (with `nested`
    inner agent runs, each carrying the same)."""
    provider = TracerProvider(resource=Resource({"service.name": "regex-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.http_url}/v1/traces")))
    tracer = provider.get_tracer("regex.agent")

    def agent_run(name: str, inner: int) -> str:
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
        agent["otelgrade.ground_truth"] = ground_truth
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "go"}]}]),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        }
        with tracer.start_as_current_span(f"invoke_agent {name}", attributes=agent) as span:
            for i in range(inner):
                agent_run(f"regex-inner-{i}", 0)
            with tracer.start_as_current_span("chat", attributes=chat):
                pass
            return f"{span.get_span_context().trace_id:032x}"

    trace_id = agent_run("regex", nested)
    provider.shutdown()
    return trace_id


def wait_for_grade(server: ServeProcess, trace_id: str, timeout: float) -> dict[str, Any] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for grade in server.grades():
            if grade["trace_id"] == trace_id:
                return grade
        time.sleep(0.05)
    return None


FROM_SPANS = {"rebuild": {"ground_truth_from_spans": True}}  # the runs' own patterns are read (off by default)


def test_a_runaway_pattern_from_a_span_grades_error_and_the_server_keeps_answering(serve: Serve) -> None:
    suites = [{"name": "regex", "graders": [{"name": "answer", "type": "letta.regex_match"}]}]
    server = serve({**FROM_SPANS, "suites": suites})
    with server.health_probe() as stalls:
        runaway = send_run(server, RUNAWAY, HOSTILE)
        nested = send_run(server, "^(a+)+$", "a" * 29 + "!")  # `re` needs half a minute for this one
        plain = send_run(server, "^a+!$", HOSTILE)
        deadline = time.monotonic() + 30
        while len(server.grades()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert server.stop() == 0
    grades = {g["trace_id"]: g for g in server.grades()}
    assert grades[runaway]["outcome"] == "error"
    assert grades[runaway]["metadata"]["reason"] == "regex_timeout"
    assert "did not finish" in grades[runaway]["rationale"]
    assert (grades[nested]["outcome"], grades[plain]["outcome"]) == ("fail", "pass")
    assert max(stalls) < 1.0, f"/healthz took {max(stalls):.2f}s while a pattern ran"


def _run(output: str = HOSTILE, **fields: Any) -> Trajectory:
    messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": output}]
    return Trajectory(trace_id="1" * 32, span_id="2" * 16, output=output, messages=messages, **fields)


CONFIGURED = [
    ("potato.regex_match", {"pattern": RUNAWAY}, _run()),
    ("evaldeck.regex", {"pattern": RUNAWAY}, _run()),
    ("vally.output-matches", {"pattern": RUNAWAY}, _run()),
    (  # fifty calls share one budget
        "vally.tool-calls",
        {"required": [{"name": "search", "pattern": "^(a|a)+x$"}]},
        _run(tool_calls=[ToolCall(name="search", arguments=HOSTILE)] * 50),
    ),
    (
        "letta.exact_match",
        {"ground_truth": "a", "extractor": "pattern", "extractor_config": {"pattern": RUNAWAY}},
        _run(),
    ),
    ("potato.json_schema_match", {"schema": {"type": "string", "pattern": RUNAWAY}}, _run(json.dumps(HOSTILE))),
    (
        "potato.json_schema_match",
        {"schema": {"type": "object", "patternProperties": {RUNAWAY: {}}, "additionalProperties": False}},
        _run(json.dumps({HOSTILE: 1})),
    ),
]


@pytest.mark.parametrize(("grader_type", "params", "trajectory"), CONFIGURED, ids=[c[0] for c in CONFIGURED])
def test_a_runaway_configured_pattern_grades_error_within_its_budget(
    grader_type: str, params: dict[str, Any], trajectory: Trajectory
) -> None:
    grader = build_grader(grader_type, params)
    began = time.monotonic()
    with budget(SHORT_BUDGET):
        result = grade_safely(grader, trajectory)
    took = time.monotonic() - began
    assert isinstance(result, GradeResult)
    assert result.outcome == "error" and result.metadata["reason"] == "regex_timeout", result
    # left alone a runaway takes hours; the budget is 0.2 s, the rest is slack for a loaded machine
    assert took < 5.0, f"{grader_type} took {took:.1f}s"


def test_patterns_keep_pythons_syntax_and_messages() -> None:
    result = grade_safely(build_grader("evaldeck.regex", {"pattern": "(unclosed"}), _run())
    assert isinstance(result, GradeResult) and result.outcome == "error"
    assert "missing ), unterminated subpattern" in result.rationale
    ascii_only = grade_safely(build_grader("potato.regex_match", {"pattern": r"^\w+$", "flags": 256}), _run("é"))
    assert isinstance(ascii_only, GradeResult) and ascii_only.outcome == "fail"  # re.ASCII honoured


def test_a_runaway_match_pattern_leaves_the_run_out_of_its_suite() -> None:
    with budget(SHORT_BUDGET):
        assert match_filter({"agent_name": RUNAWAY})(_run(agent_name=HOSTILE)) is False
    assert match_filter({"agent_name": "^a+!$"})(_run(agent_name=HOSTILE)) is True


def test_the_runs_of_one_trace_share_one_regex_budget_and_a_huge_pattern_is_not_compiled(serve: Serve) -> None:
    suites = [{"name": "regex", "match": {"agent_name": "^regex"}, "graders": [{"type": "letta.regex_match"}]}]
    server = serve({**FROM_SPANS, "suites": suites})
    hostile = send_run(server, RUNAWAY, HOSTILE, nested=40)  # forty runs in one small request, each a runaway
    began = time.monotonic()
    plain = send_run(server, "^a+!$", HOSTILE)
    assert wait_for_grade(server, plain, timeout=20) is not None, "a plain run waited behind a hostile trace"
    delay = time.monotonic() - began
    assert delay < 10.0, f"a plain run was graded {delay:.1f}s after it was sent"  # settle + the trace's budget
    # with grading workers the hostile trace may be another worker's, still spending its budget
    assert wait_for_grade(server, hostile, timeout=20) is not None
    hostile_grades = [g for g in server.grades() if g["trace_id"] == hostile]
    assert hostile_grades and all(g["outcome"] == "error" for g in hostile_grades)

    began = time.monotonic()
    huge = send_run(server, "(?:a{1000}){1000}", HOSTILE)  # a million steps once its repeats are written out
    grade = wait_for_grade(server, huge, timeout=10)
    assert grade is not None and "too large to compile" in grade["rationale"], grade  # letta: an invalid pattern
    assert time.monotonic() - began < 3.0
    assert server.stop() == 0


CATASTROPHIC = [
    ({"match": {"agent_name": "^(a|a)+$"}}, "suites[0].match.agent_name"),
    ({"match": {"user.id": ["^ok$", "^(\\w+\\s?)+$"]}}, "suites[0].match.user.id"),
    ({"graders": [{"type": "potato.regex_match", "pattern": "(x+x+)+y"}]}, "suites[0].graders[0].pattern"),
    ({"graders": [{"type": "evaldeck.regex", "pattern": "^(a+)+$"}]}, "suites[0].graders[0].pattern"),
    ({"graders": [{"type": "vally.output-matches", "pattern": "^(a|a)*$"}]}, "suites[0].graders[0]"),
    (
        {
            "graders": [
                {
                    "type": "letta.exact_match",
                    "ground_truth": "a",
                    "extractor": "pattern",
                    "extractor_config": {"pattern": "(.*)*x"},
                }
            ]
        },
        "suites[0].graders[0].extractor_config.pattern",
    ),
]


def check_config(tmp_path: Path, config: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "otelgrade", "check-config", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("suite", "where"), CATASTROPHIC, ids=[w for _, w in CATASTROPHIC])
def test_check_config_refuses_a_catastrophic_pattern_wherever_it_is_configured(
    tmp_path: Path, suite: dict[str, Any], where: str
) -> None:
    graders = [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}]
    checked = check_config(tmp_path, {"suites": [{"name": "booking", "graders": graders, **suite}]})
    assert checked.returncode == 2, checked.stdout
    assert where in checked.stderr and "backtracks catastrophically" in checked.stderr
    assert "(?>a+)+" in checked.stderr  # the fix is in the message


def test_check_config_keeps_ordinary_patterns(tmp_path: Path) -> None:
    graders = [
        {"type": "potato.regex_match", "pattern": r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$"},
        {"type": "vally.output-matches", "pattern": r"(?i)booking (ref|reference)\s*:?\s*[A-Z]{3}\d{3}"},
        {"type": "evaldeck.regex", "pattern": r"^\s*(\w+)\s*=\s*(.*?)\s*$"},
    ]
    match = {"agent_name": "^booking", "service.name": ["^web-(eu|us)$", "api"]}
    checked = check_config(tmp_path, {"suites": [{"name": "booking", "match": match, "graders": graders}]})
    assert checked.returncode == 0, checked.stderr
