"""Regular expressions cannot run away: a pattern that backtracks without end, from a span's ground truth or from
a config, grades `error` (reason `regex_timeout`) within its time budget, and the server keeps answering."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otelgrade.graders import build_grader, grade_safely
from otelgrade.results import GradeResult
from otelgrade.route import match_filter
from otelgrade.trajectory import ToolCall, Trajectory
from tests.conftest import ServeProcess

Serve = Callable[..., ServeProcess]

RUNAWAY = "^(a|a)+$"  # exponential for any backtracking engine, `regex` included
HOSTILE = "a" * 40 + "!"


def send_run(server: ServeProcess, ground_truth: str, answer: str) -> str:
    """One GenAI agent run whose answer and ground truth travel as span attributes, sent by the SDK."""
    provider = TracerProvider(resource=Resource({"service.name": "regex-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.http_url}/v1/traces")))
    tracer = provider.get_tracer("regex.agent")
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "regex",
        "otelgrade.ground_truth": ground_truth,
    }
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "go"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]),
    }
    with tracer.start_as_current_span("invoke_agent regex", attributes=agent) as root:
        with tracer.start_as_current_span("chat", attributes=chat):
            pass
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.shutdown()
    return trace_id


def test_a_runaway_pattern_from_a_span_grades_error_and_the_server_keeps_answering(serve: Serve) -> None:
    server = serve({"suites": [{"name": "regex", "graders": [{"name": "answer", "type": "letta.regex_match"}]}]})
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
    result = grade_safely(grader, trajectory)
    took = time.monotonic() - began
    assert isinstance(result, GradeResult)
    assert result.outcome == "error" and result.metadata["reason"] == "regex_timeout", result
    assert took < 5.0, f"{grader_type} took {took:.1f}s"


def test_patterns_keep_pythons_syntax_and_messages() -> None:
    result = grade_safely(build_grader("evaldeck.regex", {"pattern": "(unclosed"}), _run())
    assert isinstance(result, GradeResult) and result.outcome == "error"
    assert "missing ), unterminated subpattern" in result.rationale
    ascii_only = grade_safely(build_grader("potato.regex_match", {"pattern": r"^\w+$", "flags": 256}), _run("é"))
    assert isinstance(ascii_only, GradeResult) and ascii_only.outcome == "fail"  # re.ASCII honoured


def test_a_runaway_match_pattern_leaves_the_run_out_of_its_suite() -> None:
    assert match_filter({"agent_name": RUNAWAY})(_run(agent_name=HOSTILE)) is False
    assert match_filter({"agent_name": "^a+!$"})(_run(agent_name=HOSTILE)) is True
