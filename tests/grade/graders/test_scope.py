"""Grading single calls (`scope: tool_call` / `scope: llm_call`) on real captured runs, offline through the `Pipeline`
and live through `otelgrade serve`. Expected verdicts come from the capture's ground truth (`expected.json`: each
run's tool calls with their arguments and error flags, its model calls, its answer) or from the raw spans' own
attributes and times, never from the trajectory the graders read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.spans import Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.judges import DISABLED, JudgeClient
from otelgrade.pipeline import Pipeline
from tests.conftest import ServeProcess
from tests.export.sinks.test_otlp import Received, attrs, grpc_receiver
from tests.fake_openai import FakeOpenAI, Reply
from tests.grade.graders.test_health import RAW_INPUT, RAW_OUTPUT, captured, cases
from tests.grade.graders.test_health import raw_spans as received_spans
from tests.grade.judges.test_runner import api_key, fake, make_runner, user_text
from tests.grade.test_grading import ListSink
from tests.paths import FIXTURES, REPO
from tests.replay import exporters, grade_offline, replay_folder

__all__ = ["api_key", "fake", "grpc_receiver"]  # fixtures, used by name

FIXTURES = FIXTURES
CHARGE_SCHEMA = {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}}


def graded(
    graders: list[dict[str, Any]],
    runs: list[Trajectory],
    judges: JudgeClient = DISABLED,
    metrics: Metrics | None = None,
    sinks: tuple[Any, ...] = (),
) -> list[Grade]:
    """Every grade of these runs by one suite of these grader blocks, as `otelgrade grade` computes them."""
    config = parse_config({"suites": [{"name": "calls", "graders": graders}]})
    metrics = metrics or Metrics()
    grading = Pipeline(config, metrics, sinks=sinks, judges=judges)

    async def go() -> list[Grade]:
        return [g for run in runs for g in await grading.grade_and_wait(run)]

    return asyncio.run(go())


def counted(metrics: Metrics, **labels: str) -> float:
    """`otelgrade_grades_total` summed over the series with these labels (any environment)."""
    return sum(
        s.value
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "otelgrade_grades_total" and all(s.labels.get(k) == v for k, v in labels.items())
    )


def raw_spans(source: str, scenario: str) -> dict[str, Span]:
    """The capture's spans, every field read, by span id."""
    return {span_id: span.read() for span_id, span in received_spans(source, scenario).items()}


def mentions(span: Span, name: str) -> bool:
    """Whether a raw span is about `name`: in its name or one of its string attributes."""
    return name in span.name or any(isinstance(v, str) and name in v for v in span.attributes.values())


def seconds(span: Span) -> float:
    return (span.end_ns - span.start_ns) / 1e9


def raw_tokens(span: Span) -> int:
    found = [span.attributes.get(k) for k in (*RAW_INPUT, *RAW_OUTPUT)]
    return sum(int(v) for v in found if isinstance(v, int | float | str) and str(v).isdigit())


# --- tool calls --------------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "scenario"), cases("tool_error", "agent_error", "happy", "parallel"))
def test_each_tool_call_gets_its_own_grade_carrying_its_span(source: str, scenario: str) -> None:
    for expected, run in captured(source, scenario):
        grades = graded([{"name": "tool_ok", "type": "tool_succeeded", "scope": "tool_call"}], [run])

        assert [g.outcome for g in grades] == ["fail" if t["error"] else "pass" for t in expected["tool_calls"]]
        spans = raw_spans(source, scenario)
        for grade, truth, call in zip(grades, expected["tool_calls"], run.tool_calls, strict=True):
            assert (grade.trace_id, grade.span_id, grade.scope) == (run.trace_id, run.span_id, "tool_call")
            assert grade.rationale.startswith(f"tool call {truth['name']}")
            if "execution" not in call.witnesses:  # no span executed it (a loop the application wrote): none named
                assert grade.call_span_id is None
                continue
            assert grade.call_span_id in spans and mentions(spans[grade.call_span_id], truth["name"])
        executed = [g.call_span_id for g in grades if g.call_span_id is not None]
        assert len(set(executed)) == len(executed)


def test_metrics_count_calls_and_a_failing_call_points_at_its_trace() -> None:
    runs = [run for scenario in ("tool_error", "happy") for _, run in captured("traces/pydantic-ai-v5", scenario)]
    truth = [
        t for s in ("tool_error", "happy") for r in captured("traces/pydantic-ai-v5", s) for t in r[0]["tool_calls"]
    ]
    metrics, sink = Metrics(), ListSink()

    grades = graded(
        [{"name": "tool_ok", "type": "tool_succeeded", "scope": "tool_call"}], runs, metrics=metrics, sinks=(sink,)
    )

    failed = sum(t["error"] for t in truth)
    assert counted(metrics, grader="tool_ok", outcome="fail") == failed == 1
    assert counted(metrics, grader="tool_ok", outcome="pass") == len(truth) - failed == 2
    assert sink.grades == grades
    assert all(g.call_span_id and g.scope == "tool_call" for g in sink.grades)
    (exemplar,) = [
        s.exemplar
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "otelgrade_grades_total" and s.labels.get("outcome") == "fail" and s.exemplar
    ]
    assert exemplar.labels == {"trace_id": runs[0].trace_id}


@pytest.mark.parametrize(("source", "scenario"), cases("tool_error"))
def test_tool_arguments_against_a_json_schema(source: str, scenario: str) -> None:
    """Every capture's tool_error run charges 120 (or calls another tool): a schema allowing at most 100 fails it,
    one allowing 500 passes it; a capture without tool arguments (content off) is skipped, never failed."""
    for expected, run in captured(source, scenario):
        strict = {**CHARGE_SCHEMA, "properties": {"amount": {"type": "number", "maximum": 100}}}
        loose = {**CHARGE_SCHEMA, "properties": {"amount": {"type": "number", "maximum": 500}}}
        where = {"tool": ["charge_card", "^Travel-charge_card$"]}
        grades = graded(
            [
                {"name": "strict", "type": "arguments_schema", "scope": "tool_call", "where": where, "schema": strict},
                {"name": "loose", "type": "arguments_schema", "scope": "tool_call", "where": where, "schema": loose},
            ],
            [run],
        )
        charges = [t for t in expected["tool_calls"] if t["name"].endswith("charge_card")]
        by_name = {name: [g for g in grades if g.grader == name] for name in ("strict", "loose")}
        if not charges:
            for found in by_name.values():
                assert [(g.outcome, g.metadata.get("reason"), g.call_span_id) for g in found] == [
                    ("skipped", "no_matching_call", None)
                ]
            continue
        if "tool_arguments" in expected.get("lacks", ()):
            assert {(g.outcome, g.metadata.get("reason")) for g in grades} == {("skipped", "content_not_captured")}
            continue
        amounts = [
            json.loads(t["arguments"])["amount"] if isinstance(t["arguments"], str) else t["arguments"]["amount"]
            for t in charges
        ]
        assert [g.outcome for g in by_name["strict"]] == ["pass" if a <= 100 else "fail" for a in amounts]
        assert [g.outcome for g in by_name["loose"]] == ["pass" if a <= 500 else "fail" for a in amounts]
        for g in by_name["strict"]:
            if g.outcome == "fail":
                assert "amount" in g.rationale and "maximum of 100" in g.rationale


@pytest.mark.parametrize(("source", "scenario"), cases("parallel"))
def test_tool_arguments_contain_a_text_or_match_a_regex(source: str, scenario: str) -> None:
    for expected, run in captured(source, scenario):
        grades = graded(
            [
                {
                    "name": "paris",
                    "type": "arguments_contain",
                    "scope": "tool_call",
                    "text": "paris",
                    "ignore_case": True,
                },
                {"name": "tokyo", "type": "arguments_match", "scope": "tool_call", "pattern": r'"city":\s*"Tok'},
            ],
            [run],
        )
        if "tool_arguments" in expected.get("lacks", ()):
            assert {g.outcome for g in grades} == {"skipped"}
            continue
        cities = [str(t["arguments"]) for t in expected["tool_calls"]]
        assert [g.outcome for g in grades if g.grader == "paris"] == [
            "pass" if "Paris" in c else "fail" for c in cities
        ]
        assert [g.outcome for g in grades if g.grader == "tokyo"] == [
            "pass" if "Tokyo" in c else "fail" for c in cities
        ]


def test_a_tool_calls_latency_from_its_span_and_a_call_without_a_span_is_skipped() -> None:
    ((_, run),) = captured("traces/pydantic-ai-v5", "happy")
    spans = raw_spans("traces/pydantic-ai-v5", "happy")
    tool_spans = [s for s in spans.values() if s.attributes.get("gen_ai.tool.name")]
    limit = min(seconds(s) for s in tool_spans)  # the quicker call passes, a slower one fails

    grades = graded([{"type": "duration", "scope": "tool_call", "max": limit}], [run])

    assert {g.call_span_id: g.outcome for g in grades} == {
        s.span_id: "pass" if seconds(s) <= limit else "fail" for s in tool_spans
    }
    assert {g.outcome for g in grades} == {"pass", "fail"}
    # a tool call no span executed (a tool loop the application wrote): its latency is unknown, which is no failure
    ((truth, loop),) = captured("frameworks/openai-sdk-openinference", "happy")
    untimed = graded([{"type": "duration", "scope": "tool_call", "max": 60}], [loop])
    assert [(g.outcome, g.call_span_id) for g in untimed] == [("skipped", None)] * len(truth["tool_calls"]) != []
    assert untimed[0].rationale.startswith(f"tool call {truth['tool_calls'][0]['name']}")


# --- model calls -------------------------------------------------------------------------------

# Captures whose model-call spans record a finish reason, each in its own spelling (tool_calls, tool-calls,
# tool_use, ["tool_calls"] ...). Google ADK is not among them: Gemini answers STOP for a function call too.
FINISHES = (
    "traces/openai-v2-latest",
    "traces/pydantic-ai-v1-events",
    "traces/strands",
    "traces/traceloop-0.45",
    "traces/vercel-ai-otel",
    "frameworks/agent-framework",
    "frameworks/autogen",
    "frameworks/langgraph-traceloop",
    "frameworks/mastra",
    "frameworks/pydantic-ai",
    "frameworks/semantic-kernel",
    "frameworks/vercel-ai",
)


@pytest.mark.parametrize(("source", "scenario"), cases("happy", "parallel", "tool_error", sources=FINISHES))
def test_each_model_call_is_graded_by_its_finish_reason(source: str, scenario: str) -> None:
    """In these runs every model call but the last asked for tools and the last one answered (the ground truth's
    tool calls and answer): with `allow: [stop]` each tool-calling response fails and the answer passes; with the
    default (no length, content_filter or error finish) all pass."""
    for expected, run in captured(source, scenario):
        assert expected["tool_calls"] and expected["output"] and expected["status"] == "ok"
        grades = graded(
            [
                {"name": "answered", "type": "finish_reason", "scope": "llm_call", "allow": ["stop"]},
                {"name": "complete", "type": "finish_reason", "scope": "llm_call"},
            ],
            [run],
        )
        answered = [g for g in grades if g.grader == "answered"]
        calls = expected["llm_calls"]
        assert [g.outcome for g in answered] == ["fail"] * (calls - 1) + ["pass"]
        assert all("finished with tool_call (not one of stop)" in g.rationale for g in answered[:-1])
        assert [g.outcome for g in grades if g.grader == "complete"] == ["pass"] * calls
        assert [g.rationale.split(" (")[0].split(":")[0] for g in answered] == [
            f"model call {i}" for i in range(1, calls + 1)
        ]


def test_a_model_call_that_finished_with_an_error_fails_and_one_without_a_reason_is_skipped() -> None:
    ((expected, run),) = captured("frameworks/mastra", "agent_error")  # the run failed in its second model call
    reasons = [
        s.attributes["gen_ai.response.finish_reasons"]
        for s in sorted(raw_spans("frameworks/mastra", "agent_error").values(), key=lambda s: s.start_ns)
        if "gen_ai.response.finish_reasons" in s.attributes
    ]
    assert expected["status"] == "error" and reasons[-1] == '["error"]'

    grades = graded([{"type": "finish_reason", "scope": "llm_call"}], [run])

    assert [g.outcome for g in grades] == ["pass", "fail"]
    assert "finished with error (disallowed)" in grades[-1].rationale
    ((_, silent),) = captured("traces/pydantic-ai-v5", "tool_error")  # pydantic-ai 2 records no finish reason
    assert {
        (g.outcome, g.rationale.split(": ")[-1])
        for g in graded([{"type": "finish_reason", "scope": "llm_call"}], [silent])
    } == {("skipped", "the call records no finish reason")}


@pytest.mark.parametrize("source", ["traces/pydantic-ai-v5", "traces/openai-v2-latest", "frameworks/pydantic-ai"])
def test_a_token_budget_per_model_call_from_each_call_spans_usage(source: str) -> None:
    ((expected, run),) = captured(source, "happy")
    spans = raw_spans(source, "happy")

    totals = sorted(raw_tokens(s) for s in spans.values() if s.attributes.get("gen_ai.operation.name") == "chat")
    limit = totals[len(totals) // 2]  # the median call: those above it fail
    grades = graded([{"type": "token_budget", "scope": "llm_call", "max_total": limit}], [run])

    assert len(grades) == expected["llm_calls"]
    assert [g.outcome for g in grades] == [
        "pass" if raw_tokens(spans[g.call_span_id]) <= limit else "fail" for g in grades
    ]
    assert {g.outcome for g in grades} == {"pass", "fail"}


def test_a_trace_without_model_calls_or_without_content_is_skipped_never_failed() -> None:
    """AutoGen with default settings records no model calls; openai-v2 with default settings records no tool
    arguments: a call grader that needs them answers `skipped`, content not captured."""
    autogen = [run for _, run in captured("frameworks/autogen-default", "happy")]
    (no_calls,) = graded([{"type": "token_budget", "scope": "llm_call", "max_total": 10}], autogen)
    assert (no_calls.outcome, no_calls.metadata["reason"], no_calls.call_span_id) == (
        "skipped",
        "content_not_captured",
        None,
    )
    # AutoGen records a model call only when it succeeds: of a failed run's two calls, the one recorded is graded
    ((truth, failed),) = captured("frameworks/autogen", "agent_error")
    assert truth["status"] == "error" and truth["llm_calls"] == 2 and "llm_calls" in truth["lacks"]
    (recorded,) = graded([{"type": "token_budget", "scope": "llm_call", "max_total": 10**6}], [failed])
    assert recorded.outcome == "pass" and recorded.call_span_id
    ((expected, quiet),) = captured("frameworks/openai-v2-default", "tool_error")
    assert "tool_arguments" in expected["lacks"]
    grades = graded([{"type": "arguments_schema", "scope": "tool_call", "schema": CHARGE_SCHEMA}], [quiet])
    assert len(grades) == len(expected["tool_calls"])
    assert {(g.outcome, g.metadata["reason"]) for g in grades} == {("skipped", "content_not_captured")}


def test_a_judge_on_each_model_call_sees_that_calls_messages(fake: FakeOpenAI) -> None:
    """The judge sees one model call: the request among its input messages, its response as the submission. The
    fake judge passes a response that holds the run's answer; only the last call gave it (the ground truth)."""
    ((expected, run),) = captured("traces/pydantic-ai-v5", "happy")
    answer = expected["output"]
    fake.default = lambda body: Reply.grade(0.9 if answer in user_text(body) else 0.2, "judged")
    runner, metrics = make_runner(fake.base_url)
    blocks = [
        {
            "name": "step_judge",
            "type": "rubric",
            "scope": "llm_call",
            "prompt": "Request: {input}\nResponse: {submission}",
        }
    ]

    async def go() -> list[Grade]:
        await runner.start()
        try:
            config = parse_config({"suites": [{"name": "calls", "graders": blocks}]})
            grading = Pipeline(config, metrics, sinks=(), judges=runner)
            assert grading.grading.judge_graders() == ["step_judge"]
            return await grading.grade_and_wait(run)
        finally:
            await runner.close()

    grades = asyncio.run(go())

    assert [g.outcome for g in grades] == ["fail"] * (expected["llm_calls"] - 1) + ["pass"]
    asked = [user_text(body) for body in fake.requests]
    assert len(asked) == expected["llm_calls"]
    assert all(expected["input"] in text for text in asked)
    responses = [text.split("\nResponse: ", 1)[1] for text in asked]  # in the order the judge calls arrived
    assert sum(answer in r for r in responses) == 1
    assert any(r.startswith(f"{expected['tool_calls'][0]['name']}(") for r in responses)  # a response asking a tool
    spans = raw_spans("traces/pydantic-ai-v5", "happy")
    assert all(spans[g.call_span_id].attributes.get("gen_ai.operation.name") == "chat" for g in grades)


def test_a_judge_on_a_model_call_without_captured_content_is_skipped_without_asking(fake: FakeOpenAI) -> None:
    ((expected, run),) = captured("frameworks/google-adk-default", "happy")
    runner, _ = make_runner(fake.base_url)
    grader = (
        parse_config(
            {
                "suites": [
                    {
                        "name": "s",
                        "graders": [{"type": "rubric", "scope": "llm_call", "prompt": "{input} {submission}"}],
                    }
                ]
            }
        )
        .suites[0]
        .graders[0]
        .scoped(runner)
    )

    verdicts = grader.verdicts(run)

    assert len(verdicts) == expected["llm_calls"]
    assert {(v.outcome, v.metadata["reason"]) for _, v in verdicts} == {("skipped", "content_not_captured")}
    assert fake.requests == []


# --- config errors -----------------------------------------------------------------------------

SCHEMA_BLOCK = {"type": "arguments_schema", "schema": CHARGE_SCHEMA}


@pytest.mark.parametrize(
    ("block", "key", "says"),
    [
        ({"type": "tool_succeeded", "scope": "tool"}, "scope", "unknown scope 'tool' (did you mean `tool_call`?)"),
        ({"type": "max_tool_calls", "max": 3, "where": {"tool": "x"}}, "where", "add `scope: tool_call`"),
        ({"type": "tool_succeeded", "scope": "tool_call", "where": {"model": "x"}}, "where.model", "it takes `tool`"),
        ({"type": "tool_succeeded", "scope": "tool_call", "where": "charge_card"}, "where", "must be a mapping"),
        ({"type": "finish_reason", "scope": "llm_call", "where": {"model": "^gpt("}}, "where.model", "invalid regex"),
        ({"type": "tools_called", "tools": ["x"], "scope": "tool_call"}, "scope", "cannot grade a single tool call"),
        ({"type": "finish_reason", "scope": "tool_call"}, "scope", "with `scope: tool_call` use one of: "),
        (SCHEMA_BLOCK, "scope", "`arguments_schema` grades one call at a time: add `scope: tool_call`"),
        (
            {"type": "all_of", "graders": [{**SCHEMA_BLOCK, "scope": "tool_call"}]},
            "graders[0].scope",
            "belongs on a suite's own grader block",
        ),
        (
            {"type": "finish_reason", "scope": "llm_call", "allow": ["stop"], "disallow": ["length"]},
            "allow",
            "not both",
        ),
        ({"type": "arguments_match", "scope": "tool_call", "pattern": "("}, "pattern", "invalid regex"),
    ],
)
def test_config_errors_name_the_key_and_the_fix(block: dict[str, Any], key: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({"suites": [{"name": "s", "graders": [block]}]})
    assert raised.value.path == f"suites[0].graders[0].{key}"
    assert says in raised.value.message


def test_the_types_that_grade_single_calls_are_listed_in_the_error() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({"suites": [{"name": "s", "graders": [{"type": "max_steps", "max": 3, "scope": "llm_call"}]}]})
    listed = raised.value.message.split("use one of: ")[1]
    for per_call in ("finish_reason", "token_budget", "duration", "rubric"):
        assert per_call in listed
    assert "arguments_schema" not in listed and "max_steps" not in listed


# --- live ----------------------------------------------------------------------------------------


def test_serve_grades_each_call_as_grade_does_and_both_sinks_carry_the_calls_span(
    serve: Callable[..., ServeProcess], grpc_receiver: tuple[str, Received], tmp_path: Path
) -> None:
    endpoint, received = grpc_receiver
    grades_path = tmp_path / "grades.jsonl"
    strict = {**CHARGE_SCHEMA, "properties": {"amount": {"type": "number", "maximum": 100}}}
    graders = [
        {"name": "tool_ok", "type": "tool_succeeded", "scope": "tool_call"},
        {
            "name": "charge",
            "type": "arguments_schema",
            "scope": "tool_call",
            "where": {"tool": "charge_card"},
            "schema": strict,
        },
        {"name": "call_tokens", "type": "token_budget", "scope": "llm_call", "max_total": 80},
    ]
    sinks = [{"type": "jsonl", "path": str(grades_path)}, {"type": "otlp", "endpoint": endpoint}]
    server = serve({"suites": [{"name": "calls", "graders": graders}], "sinks": sinks})
    source = "traces/pydantic-ai-v5"
    folders = [FIXTURES / source / scenario for scenario in ("tool_error", "happy")]
    offline = grade_offline(server.config_path, folders)

    spans, logs = exporters("grpc", server.grpc_address, server.http_url)
    for folder in folders:
        replay_folder(folder, spans, logs)
    spans.shutdown()
    logs.shutdown()
    server.wait_for_metric("otelgrade_runs_graded_total", {"suite": "calls"}, 2)
    assert server.stop() == 0

    online = [json.loads(line) for line in grades_path.read_text().splitlines()]
    keys = ("trace_id", "span_id", "grader", "outcome", "scope", "call_span_id")
    assert sorted(tuple(g[k] or "" for k in keys) for g in online) == sorted(
        tuple(g[k] or "" for k in keys) for g in offline
    )

    # the ground truth: tool_error charges 120 and the card is declined; happy searches, then books
    truth = {s: captured(source, s)[0][0] for s in ("tool_error", "happy")}
    tools = [t for s in ("tool_error", "happy") for t in truth[s]["tool_calls"]]
    tool_ok = [g for g in online if g["grader"] == "tool_ok"]
    assert sorted(g["outcome"] for g in tool_ok) == sorted("fail" if t["error"] else "pass" for t in tools)
    raw = {**raw_spans(source, "tool_error"), **raw_spans(source, "happy")}
    charge_span = next(s.span_id for s in raw.values() if s.attributes.get("gen_ai.tool.name") == "charge_card")
    assert {(g["grader"], g["outcome"]) for g in online if g["call_span_id"] == charge_span} == {
        ("tool_ok", "fail"),
        ("charge", "fail"),
    }
    calls = sum(t["llm_calls"] for t in truth.values())
    assert len([g for g in online if g["grader"] == "call_tokens"]) == calls
    assert [g["outcome"] for g in online if g["grader"] == "charge" and g["call_span_id"] is None] == ["skipped"]

    # the OTLP sink puts each call's grades on a span under that call's span
    evaluations = received.wait_for(len({(g["trace_id"], g["call_span_id"] or g["span_id"]) for g in online}))
    under = {s.parent_span_id.hex(): s for _, s in evaluations}
    for g in online:
        if g["call_span_id"]:
            span = under[g["call_span_id"]]
            events = [attrs(e.attributes) for e in span.events]
            assert {
                "gen_ai.evaluation.name": g["grader"],
                "gen_ai.evaluation.score.label": g["outcome"],
                "otelgrade.scope": g["scope"],
                "otelgrade.call.span_id": g["call_span_id"],
            }.items() <= next(e for e in events if e["gen_ai.evaluation.name"] == g["grader"]).items()


def test_every_example_in_the_readmes_table_of_call_graders_loads() -> None:
    readme = (REPO / "README.md").read_text()
    table = readme.split("### Single tool and model calls")[1].split("\n\n|")[1].split("\n\n")[0]
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    examples = [yaml.safe_load(row[-1].strip(" |`")) for row in rows]
    assert len(examples) == 8
    for example in examples:
        (spec,) = parse_config({"suites": [{"name": "s", "graders": [example]}]}).suites[0].graders
        assert spec.scope == example["scope"] and spec.where == example.get("where", {})
