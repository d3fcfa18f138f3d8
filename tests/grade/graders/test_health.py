"""Run-health graders on real captured runs. Each expected verdict comes from the capture's ground truth
(`expected.json`: tool calls with arguments and error flags, status, output, what the trace lacks) or from the
raw spans' own attributes (usage, timestamps, request bodies), never from the trajectory the grader reads."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from itertools import groupby
from typing import Any

import pytest
import yaml

from otelgrade.core.errors import ConfigError
from otelgrade.core.spans import Span
from otelgrade.core.trajectory import LLMCall, ToolCall, Trajectory
from otelgrade.grade.graders import GradeResult, build_grader
from otelgrade.intake.decode import decode_traces
from tests.captures import read_folder
from tests.e2e.test_rebuild_captures import find_run
from tests.paths import FIXTURES

FIXTURES = FIXTURES
SOURCES = tuple(
    f"{root}/{p.parent.name}"
    for root in ("traces", "frameworks")
    for p in sorted((FIXTURES / root).glob("*/expected.json"))
)
RAW_INPUT = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
    "ai.usage.inputTokens",
)
RAW_OUTPUT = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "ai.usage.outputTokens",
)


def grade(type_name: str, run: Trajectory, **params: Any) -> GradeResult:
    result = build_grader(type_name, params)(run)
    assert isinstance(result, GradeResult)
    return result


@cache
def truth(source: str) -> dict[str, Any]:
    scenarios: dict[str, Any] = json.loads((FIXTURES / source / "expected.json").read_text())["scenarios"]
    return scenarios


def cases(*scenarios: str, sources: tuple[str, ...] = SOURCES, calls_shown: bool = True) -> list[Any]:
    """(source, scenario) of every capture of these scenarios, e.g. `frameworks/agno`, `many_calls`; with
    `calls_shown`, only those whose trace shows the calls and their outcomes, as the ground truth says (where it
    cannot, graders that read them skip)."""
    return [
        pytest.param(source, name, id=f"{source}/{name}")
        for source in sources
        for name in scenarios
        if name in truth(source)
        and (FIXTURES / source / name).is_dir()
        and not (
            calls_shown
            and any({"tool_calls", "tool_results"} & {*run.get("lacks", ())} for run in truth(source)[name]["runs"])
        )
    ]


@cache
def captured(source: str, scenario: str) -> tuple[tuple[dict[str, Any], Trajectory], ...]:
    """Each ground-truth run of the scenario with the run otelgrade rebuilt from the capture."""
    spec = truth(source)[scenario]
    nested_allowed = spec.get("nested_runs_allowed", False)
    got = [
        t
        for t in read_folder(FIXTURES / source / scenario)
        if t.trace_id in spec["trace_ids"] and not (nested_allowed and t.parent_span_id)
    ]
    return tuple((expected, find_run(expected, got, i)) for i, expected in enumerate(spec["runs"]))


@cache
def raw_spans(source: str, scenario: str) -> dict[str, Span]:
    folder = FIXTURES / source / scenario
    bodies = [p.read_bytes() for p in sorted(folder.glob("*.pb")) if not p.name.endswith(".logs.pb")]
    return {s.span_id: s.read() for body in bodies for s in decode_traces(body).spans}


# Vendor SDKs' usage objects (JSON): the key, and the input and output token fields it holds.
VENDOR_USAGE = (
    ("langfuse.observation.usage_details", "prompt_tokens", "completion_tokens"),
    ("mlflow.chat.tokenUsage", "input_tokens", "output_tokens"),
)


def raw_usage(span: Span) -> tuple[int, int] | None:
    """The token usage a model-call span itself carries, in any convention, or None."""
    found = [next((span.attributes[k] for k in keys if k in span.attributes), None) for keys in (RAW_INPUT, RAW_OUTPUT)]
    for key, input_field, output_field in VENDOR_USAGE:
        if None in found and isinstance(span.attributes.get(key), str):
            usage = json.loads(span.attributes[key])
            found = [usage.get(input_field), usage.get(output_field)]
    return None if None in found else (int(found[0]), int(found[1]))


def tool_keys(expected: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["name"], json.dumps(c.get("arguments"), sort_keys=True)) for c in expected["tool_calls"]]


# --- no_loops ----------------------------------------------------------------------------------


def content_off(source: str) -> bool:
    return any("tool_arguments" in r.get("lacks", ()) for spec in truth(source).values() for r in spec["runs"])


@pytest.mark.parametrize(
    ("source", "scenario"),
    cases("many_calls", "parallel", "happy", sources=tuple(s for s in SOURCES if not content_off(s))),
)
def test_no_loops_counts_repeated_tool_calls_as_the_ground_truth_has_them(source: str, scenario: str) -> None:
    """`many_calls` makes seven calls: the same tool, each with its own arguments, except agno's, which asks
    for Paris's weather twice, five calls apart."""
    for expected, run in captured(source, scenario):
        keys = tool_keys(expected)
        in_a_row = max(len(list(group)) for _, group in groupby(keys))
        anywhere = max(Counter(keys).values())
        back_to_back = grade("no_loops", run, max_repeats=1)
        windowed = grade("no_loops", run, max_repeats=1, window=len(keys) + 1)

        assert back_to_back.metadata["tool_repeats"] == in_a_row
        assert windowed.metadata["tool_repeats"] == anywhere
        assert windowed.passed == (anywhere == 1), windowed.rationale
        if anywhere > 1:
            key, _ = Counter(keys).most_common(1)[0]
            assert key[0] in windowed.rationale and f"{anywhere} times within" in windowed.rationale
            assert json.loads(key[1])["city"] in windowed.rationale
            at = [i for i, k in enumerate(keys) if k == key]
            span = at[-1] - at[0] + 1  # the narrowest window holding every repeat
            assert not grade("no_loops", run, max_repeats=anywhere - 1, window=span).passed
            assert grade("no_loops", run, max_repeats=anywhere - 1, window=span - 1).passed
        assert grade("no_loops", run).passed  # the default: no call more than twice in a row


def test_a_model_request_sent_again_and_again_is_a_loop() -> None:
    """CrewAI, its model backend down (HTTP 500), restarted the task: the same request body went out three
    times in four model calls, twice of them back to back."""
    ((_, run),) = captured("frameworks/crewai", "agent_error")
    bodies = [
        s.attributes["input.value"]
        for s in sorted(raw_spans("frameworks/crewai", "agent_error").values(), key=lambda s: s.start_ns)
        if s.attributes.get("openinference.span.kind") == "LLM"
    ]
    body, sent = Counter(bodies).most_common(1)[0]
    assert (len(bodies), sent) == (4, 3)

    looped = grade("no_loops", run, window=len(bodies))
    assert not looped.passed and looped.metadata["request_repeats"] == sent
    messages = len(json.loads(body)["messages"])
    assert (
        f"the same model request ({messages} input messages) was sent {sent} times within 4 calls" in looped.rationale
    )
    assert grade("no_loops", run, max_repeats=2).passed  # only two of them back to back


@pytest.mark.parametrize(
    ("source", "scenario"),
    cases("happy", "tool_error", sources=tuple(filter(content_off, SOURCES)), calls_shown=False),
)
def test_no_loops_is_skipped_when_the_trace_records_no_arguments_or_messages(source: str, scenario: str) -> None:
    for expected, run in captured(source, scenario):
        assert {"tool_arguments", "messages"} <= set(expected["lacks"])
        result = grade("no_loops", run)
        assert result.outcome == "skipped" and "neither tool arguments nor model input messages" in result.rationale


def test_no_loops_window_must_be_wider_than_the_repeats_it_allows() -> None:
    with pytest.raises(ConfigError, match=r"window \(2\) must be larger than max_repeats \(2\)"):
        build_grader("no_loops", {"window": 2})


# --- tool errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "scenario"), cases("tool_error", "agent_error", "many_calls", "happy"))
def test_tool_error_rate_is_the_ground_truths_share_of_failed_calls(source: str, scenario: str) -> None:
    for expected, run in captured(source, scenario):
        calls = expected["tool_calls"]
        failed = [c["name"] for c in calls if c["error"]]
        share = len(failed) / len(calls)
        strict = grade("tool_error_rate", run)

        assert strict.metadata["error_rate"] == pytest.approx(share)
        assert strict.passed == (share == 0), strict.rationale
        assert f"{len(failed)} of {len(calls)} tool calls failed" in strict.rationale
        assert all(name in strict.rationale for name in failed)
        assert grade("tool_error_rate", run, max=share).passed


@pytest.mark.parametrize(("source", "scenario"), cases("tool_error", "agent_error", "graph_error", "many_calls"))
def test_error_recovery_follows_what_the_run_did_after_a_tool_failed(source: str, scenario: str) -> None:
    """`tool_error`: a tool fails and the agent answers; `agent_error`: the model or a tool fails the run;
    `graph_error`: the failing tool ends the run."""
    for expected, run in captured(source, scenario):
        calls = expected["tool_calls"]
        failing = [i for i, c in enumerate(calls) if c["error"]]
        result = grade("error_recovery", run)
        if not failing:
            assert (result.outcome, result.rationale) == ("pass", "no failed tool call: nothing to recover from")
        elif failing[-1] == len(calls) - 1 and expected["status"] == "error":
            assert result.outcome == "fail" and result.rationale.startswith("gave up: the run ended in error")
        elif "output" in expected.get("lacks", ()):
            assert result.outcome == "skipped" and "does not record the final answer" in result.rationale
        else:
            assert expected["output"] and expected["status"] == "ok"
            assert result.outcome == "pass" and "then the run gave a final answer" in result.rationale, result


def test_repeating_the_failing_call_is_not_recovery() -> None:
    """The captured failure (pydantic-ai, `charge_card` declined), retried with the same arguments."""
    ((_, run),) = captured("traces/pydantic-ai-v5", "tool_error")
    (failed,) = run.tool_calls
    retried = run.model_copy(update={"tool_calls": [failed, failed]})

    once = grade("error_recovery", retried)
    assert once.outcome == "fail" and "repeated the failing call charge_card" in once.rationale
    assert grade("error_recovery", retried, max_retries=1).passed
    worked = run.model_copy(update={"tool_calls": [failed, failed.model_copy(update={"error": False})]})
    assert grade("error_recovery", worked).rationale == "charge_card failed, then the run went on: a retry worked"


# --- token and cost budgets ----------------------------------------------------------------------


def metered_runs() -> list[Any]:
    """Runs whose agent span reports the run's own token total (pydantic-ai's `gen_ai.aggregated_usage`)."""
    sources = ("traces/pydantic-ai-v5", "traces/pydantic-ai-v2", "frameworks/pydantic-ai")
    return cases(*sorted({name for source in sources for name in truth(source)}), sources=sources)


@pytest.mark.parametrize(("source", "scenario"), metered_runs())
def test_token_budget_sums_what_each_model_call_reported(source: str, scenario: str) -> None:
    spans = raw_spans(source, scenario)
    for _, run in captured(source, scenario):
        reported = (
            run.attributes["gen_ai.aggregated_usage.input_tokens"],
            run.attributes["gen_ai.aggregated_usage.output_tokens"],
        )
        if len(run.agents) > 1:  # the run span aggregates its own agent's calls; the request holds its workers' too
            usages = [u for c in run.llm_calls if (u := raw_usage(spans[str(c.span_id)])) is not None]
            reported = (sum(u[0] for u in usages), sum(u[1] for u in usages))
        unmetered = [c.span_id for c in run.llm_calls if raw_usage(spans[str(c.span_id)]) is None]
        result = grade("token_budget", run, max_total=sum(reported))
        if unmetered:  # a model call that failed before answering reports no usage
            assert result.outcome == "skipped" and f"(span {unmetered[0]}) carries no token usage" in result.rationale
            continue
        assert (result.metadata["input_tokens"], result.metadata["output_tokens"]) == reported
        assert result.passed and result.metadata["total_tokens"] == sum(reported)
        over = grade("token_budget", run, max_input=reported[0] - 1, max_output=reported[1])
        assert not over.passed and f"input {reported[0]} > {reported[0] - 1}" in over.rationale


def test_token_budget_is_skipped_when_the_trace_carries_no_model_calls() -> None:
    for expected, run in captured("frameworks/autogen-default", "tool_error"):
        assert "llm_calls" in expected["lacks"]
        result = grade("token_budget", run, max_total=1000)
        assert result.outcome == "skipped" and "content not captured" in result.rationale


def test_token_budget_needs_a_limit() -> None:
    with pytest.raises(ConfigError, match="max_input, max_output or max_total"):
        build_grader("token_budget", {})


def shipped_price(model: str) -> dict[str, float]:
    table: dict[str, dict[str, float]] = yaml.safe_load(
        (FIXTURES.parents[1] / "otelgrade/grade/graders/prices.yaml").read_text()
    )
    return table[model]


@pytest.mark.parametrize(
    ("source", "scenario", "model"),
    [
        ("frameworks/pydantic-ai", "many_calls", "gpt-4o-mini"),
        ("frameworks/google-adk", "happy", "gpt-4o-mini"),  # LiteLLM names it openai/gpt-4o-mini
        ("traces/traceloop-0.62", "happy", "gpt-4o-mini-2024-07-18"),  # the dated snapshot the API answered with
    ],
)
def test_cost_budget_prices_each_call_by_its_model(source: str, scenario: str, model: str) -> None:
    spans = raw_spans(source, scenario)
    ((_, run),) = captured(source, scenario)
    price = shipped_price(model)
    usage = [raw_usage(spans[str(c.span_id)]) for c in run.llm_calls]
    usd = sum(u[0] * price["input"] + u[1] * price["output"] for u in usage if u) / 1e6
    assert None not in usage and usd > 0

    within = grade("cost_budget", run, max=usd * 1.001)
    assert within.passed and within.metadata["usd"] == pytest.approx(usd)
    over = grade("cost_budget", run, max=usd * 0.999)
    assert not over.passed and f"cost ${usd:.6f}" in over.rationale


def test_a_model_without_a_price_is_skipped_until_the_config_gives_one() -> None:
    ((_, run),) = captured("traces/pydantic-ai-v5", "happy")  # a scripted model: no public price
    assert {c.model for c in run.llm_calls} == {"scripted-gpt"}

    unpriced = grade("cost_budget", run, max=1.0)
    assert unpriced.outcome == "skipped" and "no price for model 'scripted-gpt'" in unpriced.rationale
    priced = grade("cost_budget", run, max=1.0, prices={"scripted-gpt": {"input": 1000.0, "output": 2000.0}})
    tokens = grade("token_budget", run, max_total=10**6).metadata
    assert priced.metadata["usd"] == pytest.approx(
        (tokens["input_tokens"] * 1000 + tokens["output_tokens"] * 2000) / 1e6
    )
    with pytest.raises(ConfigError, match="output"):
        build_grader("cost_budget", {"max": 1, "prices": {"scripted-gpt": {"input": 1.0}}})


# --- duration and context growth ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "scenario"),
    cases("happy", "agent_error", sources=("frameworks/google-adk", "traces/strands", "frameworks/crewai")),
)
def test_duration_is_the_run_spans_wall_time(source: str, scenario: str) -> None:
    """ADK's `happy` run took 16.8 s (its first model call was slow); the others well under a second or two."""
    spans = raw_spans(source, scenario)
    for _, run in captured(source, scenario):
        root = spans[run.span_id]
        took = (root.end_ns - root.start_ns) / 1e9
        assert grade("duration", run, max=took).passed
        slow = grade("duration", run, max=took * 0.99)
        assert not slow.passed and f"took {took:.3f}s" in slow.rationale
        assert grade("duration", run, max="10s").passed == (took <= 10)


def test_duration_without_times_is_skipped() -> None:
    ((_, run),) = captured("traces/strands", "happy")
    result = grade("duration", run.model_copy(update={"duration_s": None}), max="1m")
    assert result.outcome == "skipped"


SPAN_USAGE = tuple(s for s in SOURCES if "autogen" not in s)  # AutoGen reports usage in log records, not spans


@pytest.mark.parametrize(("source", "scenario"), cases("many_calls", "handoff", "agent_error", sources=SPAN_USAGE))
def test_context_growth_compares_the_last_model_calls_input_with_the_first(source: str, scenario: str) -> None:
    spans = raw_spans(source, scenario)
    for _, run in captured(source, scenario):
        inputs = [u[0] for c in run.llm_calls if (u := raw_usage(spans[str(c.span_id)])) is not None]
        result = grade("context_growth", run, max_ratio=100)
        if len(inputs) < 2:
            assert result.outcome == "skipped" and f"the run has {len(inputs)}" in result.rationale
            continue
        ratio = inputs[-1] / inputs[0]
        assert result.metadata["ratio"] == pytest.approx(ratio)
        assert grade("context_growth", run, max_ratio=ratio).passed
        grew = grade("context_growth", run, max_ratio=ratio * 0.99)
        assert not grew.passed and f"from {inputs[0]} to {inputs[-1]}" in grew.rationale


def test_no_loops_does_not_take_requests_cut_at_the_attribute_limit_for_a_loop() -> None:
    """A long run whose SDK cut each model span's flattened messages at OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT records
    the same first messages for every later request, though tools ran between them; the same request sent again
    with nothing done in between is still a loop."""
    first = [{"role": "user", "content": "plan my trip"}, {"role": "assistant", "content": "searching"}]

    def run(tools_between: bool) -> Trajectory:
        return Trajectory(
            trace_id="1" * 32,
            span_id="2" * 16,
            llm_calls=[LLMCall(input_messages=first, step=i) for i in range(4)],
            tool_calls=[ToolCall(name="search", arguments={"page": i}, step=i) for i in range(4) if tools_between],
        )

    assert grade("no_loops", run(tools_between=True)).passed
    looped = grade("no_loops", run(tools_between=False))
    assert not looped.passed and looped.metadata["request_repeats"] == 4
