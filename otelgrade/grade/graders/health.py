"""Run-health graders: checks any run can take without a reference — loops, tool errors and recovery from them,
token and cost budgets, wall time and context growth. Each reads only the trajectory fields it needs.

A figure the trace does not carry (token usage, a price for the model, tool arguments, the final answer when
content capture is off) makes the grade `skipped` with the reason; it is never guessed.
"""

from __future__ import annotations

import functools
import json
from bisect import bisect_left
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Annotated, TypeVar

import yaml
from pydantic import Field, TypeAdapter

from otelgrade.core.errors import ConfigError
from otelgrade.core.results import GradeResult
from otelgrade.core.settings import Duration, Price
from otelgrade.core.trajectory import LLMCall, ToolCall, Trajectory
from otelgrade.grade.graders.base import NOT_CAPTURED, GradeFn, grader

T = TypeVar("T")


def most_repeated(items: Sequence[T], same: Callable[[T, T], bool], window: int | None = None) -> tuple[int, int]:
    """How often the most repeated item occurs back to back (or, with `window`, within any `window` consecutive
    items), and the index of its last occurrence there. An item `same` never matches counts once."""
    best, at, run = 0, -1, 0
    for i, item in enumerate(items):
        if window is None:
            run = run + 1 if i and same(items[i - 1], item) else 1
            count = run
        else:
            count = 1 + sum(same(items[j], item) for j in range(max(0, i - window + 1), i))
        if count > best:
            best, at = count, i
    return best, at


def _same_call(a: ToolCall, b: ToolCall) -> bool:
    """The same tool with the same arguments; calls whose arguments the trace lacks are never the same."""
    return a.arguments is not None and a.name == b.name and a.arguments == b.arguments


def _same_failure(a: ToolCall, b: ToolCall) -> bool:
    return a.error and b.error and _same_call(a, b)


def _same_request(a: LLMCall, b: LLMCall) -> bool:
    """The same model input (lists compare their lengths first, so a growing conversation costs little)."""
    return bool(a.input_messages) and a.input_messages == b.input_messages


def _call_text(call: ToolCall, limit: int = 120) -> str:
    args = call.arguments
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str)
    return f"{call.name}({text if len(text) <= limit else text[:limit] + '…'})"


def _llm_text(call: LLMCall) -> str:
    return f"the model call at step {call.step}" + (f" (span {call.span_id})" if call.span_id else "")


# --- loops and tool errors ---------------------------------------------------------------------


@grader("no_loops")
def no_loops(
    max_repeats: Annotated[int, Field(ge=1)] = 2,
    window: Annotated[int | None, Field(ge=2)] = None,
) -> GradeFn:
    """No tool is called with the same arguments, and no model request (the same input messages) is sent,
    more than `max_repeats` times in a row — or, with `window`, within any `window` consecutive calls. Calls
    whose arguments or messages the trace does not record are not compared, nor requests that look alike only
    because a long run's messages were cut at the span attribute limit (tools ran between them and nothing else
    was asked in between)."""
    if window is not None and window <= max_repeats:
        raise ConfigError(
            f"window ({window}) must be larger than max_repeats ({max_repeats}): no call can repeat more than "
            f"{max_repeats} times within {window} calls",
            "window",
        )
    where = "in a row" if window is None else f"within {window} calls"

    def grade(trajectory: Trajectory) -> GradeResult:
        tools, llms = trajectory.tool_calls, trajectory.llm_calls
        lacking = trajectory.lacks
        unrecorded = sum(c.arguments is None for c in tools)
        unargued = "tool_arguments" in lacking or unrecorded == len(tools)
        unsent = "messages" in lacking or not any(c.input_messages for c in llms)
        if (tools or llms) and unargued and unsent:
            return GradeResult.skipped(
                "the trace records neither tool arguments nor model input messages", reason=NOT_CAPTURED
            )
        tool_steps = sorted(c.step for c in tools)
        position = {id(call): i for i, call in enumerate(llms)}

        def same_request(earlier: LLMCall, later: LLMCall) -> bool:
            """The same input sent again. When tools ran in between, the agent had their results to send: equal
            inputs then mean the run went back to where it was (a restarted task) only if a request in between
            said something else; otherwise the SDK cut each span's messages at its attribute limit
            (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT), recording the same first messages of a long run."""
            if not _same_request(earlier, later):
                return False
            if bisect_left(tool_steps, later.step) == bisect_left(tool_steps, earlier.step):
                return True
            between = llms[position[id(earlier)] + 1 : position[id(later)]]
            return any(not _same_request(earlier, call) for call in between)

        tool_repeats, t = most_repeated(tools, _same_call, window)
        request_repeats, r = most_repeated(llms, same_request, window)
        found = []
        if tool_repeats > max_repeats:
            found.append(f"{_call_text(tools[t])} was called {tool_repeats} times {where}")
        if request_repeats > max_repeats:
            messages = len(llms[r].input_messages)
            found.append(f"the same model request ({messages} input messages) was sent {request_repeats} times {where}")
        counts = {"tool_repeats": tool_repeats, "request_repeats": request_repeats}
        if found:
            return GradeResult.check(False, f"{'; '.join(found)} (max {max_repeats})", **counts)
        note = f"; {unrecorded} tool call(s) without recorded arguments not compared" if unrecorded else ""
        return GradeResult.check(True, f"no call repeated more than {max_repeats} times {where}{note}", **counts)

    return grade


@grader("tool_error_rate")
def tool_error_rate(max: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0) -> GradeFn:
    """At most a `max` share (0.0-1.0) of the run's tool calls failed. A run without tool calls passes."""

    def grade(trajectory: Trajectory) -> GradeResult:
        calls = trajectory.tool_calls
        if not calls:
            return GradeResult.check(True, "no tool calls", error_rate=0.0)
        failed = [c.name for c in calls if c.error]
        rate = len(failed) / len(calls)
        which = f": {', '.join(failed)}" if failed else ""
        rationale = f"{len(failed)} of {len(calls)} tool calls failed ({rate:.0%}, max {max:.0%}){which}"
        return GradeResult.check(rate <= max, rationale, error_rate=rate)

    return grade


@grader("error_recovery")
def error_recovery(max_retries: Annotated[int, Field(ge=0)] = 0) -> GradeFn:
    """After a failed tool call the run went on to succeed: a later tool call worked (another tool, or a retry
    that worked) or the run ended with a final answer. It fails when the run gives up (ends in error, or stops
    without an answer) or repeats the failing call — the same tool and arguments failing again — more than
    `max_retries` times in a row. A run without a failed tool call passes."""

    def grade(trajectory: Trajectory) -> GradeResult:
        calls = trajectory.tool_calls
        failed = [i for i, c in enumerate(calls) if c.error]
        if not failed:
            return GradeResult.check(True, "no failed tool call: nothing to recover from")
        repeats, at = most_repeated(calls, _same_failure)
        if repeats > max_retries + 1:
            return GradeResult.check(
                False, f"repeated the failing call {_call_text(calls[at])}: it failed {repeats} times in a row"
            )
        last = calls[failed[-1]]
        after = calls[failed[-1] + 1 :]  # every call after the last failure worked
        if after:
            how = "a retry worked" if after[0].name == last.name else f"{after[0].name} worked"
            return GradeResult.check(True, f"{last.name} failed, then the run went on: {how}")
        if trajectory.status == "error":
            return GradeResult.check(False, f"gave up: the run ended in error after {last.name} failed")
        if (trajectory.output or "").strip():
            return GradeResult.check(True, f"{last.name} failed, then the run gave a final answer")
        if "output" in trajectory.lacks:
            return GradeResult.skipped(
                f"{last.name} failed and the trace does not record the final answer (content capture off?)",
                reason=NOT_CAPTURED,
            )
        return GradeResult.check(False, f"gave up: no final answer after {last.name} failed")

    return grade


# --- budgets -----------------------------------------------------------------------------------


def _unmetered(trajectory: Trajectory) -> GradeResult | None:
    """`skipped` when a model call of the run carries no token usage. (A trace without the model calls at all
    is skipped before: the budget graders read `llm_calls`.)"""
    for call in trajectory.llm_calls:
        if call.input_tokens is None or call.output_tokens is None:
            return GradeResult.skipped(f"{_llm_text(call)} carries no token usage; the total is unknown")
    return None


@grader("token_budget", reads=("llm_calls",), scopes=("run", "llm_call"))
def token_budget(
    max_input: Annotated[int | None, Field(ge=0)] = None,
    max_output: Annotated[int | None, Field(ge=0)] = None,
    max_total: Annotated[int | None, Field(ge=0)] = None,
) -> GradeFn:
    """The run's model calls used at most `max_input` input, `max_output` output and `max_total` tokens in all
    (any of the three), summed from each call's token usage."""
    limits = {"input": max_input, "output": max_output, "total": max_total}
    if all(v is None for v in limits.values()):
        raise ConfigError("token_budget needs max_input, max_output or max_total", "max_total")

    def grade(trajectory: Trajectory) -> GradeResult:
        if skip := _unmetered(trajectory):
            return skip
        used = {
            "input": sum(c.input_tokens or 0 for c in trajectory.llm_calls),
            "output": sum(c.output_tokens or 0 for c in trajectory.llm_calls),
        }
        used["total"] = used["input"] + used["output"]
        checked = [(kind, used[kind], limit) for kind, limit in limits.items() if limit is not None]
        over = [f"{kind} {n} > {limit}" for kind, n, limit in checked if n > limit]
        shown = ", ".join(f"{kind} {n} (max {limit})" for kind, n, limit in checked)
        tokens = {f"{kind}_tokens": n for kind, n in used.items()}
        if over:
            return GradeResult.check(False, f"over the token budget: {', '.join(over)}", **tokens)
        return GradeResult.check(True, f"tokens within budget: {shown}", **tokens)

    return grade


@functools.cache
def shipped_prices() -> dict[str, Price]:
    """The price table shipped in the package (`prices.yaml`), USD per million tokens by model name."""
    text = resources.files("otelgrade.grade.graders").joinpath("prices.yaml").read_text()
    return TypeAdapter(dict[str, Price]).validate_python(yaml.safe_load(text))


def price_of(model: str | None, table: dict[str, Price]) -> Price | None:
    """The model's price by its exact name, else by the name after a provider prefix (`openai/gpt-4o`)."""
    if model is None:
        return None
    return table.get(model) or table.get(model.rsplit("/", 1)[-1])


@grader("cost_budget", reads=("llm_calls",), scopes=("run", "llm_call"))
def cost_budget(max: Annotated[float, Field(ge=0.0)], prices: dict[str, Price] | None = None) -> GradeFn:
    """The run's model calls cost at most `max` USD, priced per model from the table shipped in the package
    (USD per million input and output tokens); `prices:` overrides or adds models, e.g.
    `{my-model: {input: 0.5, output: 1.5}}`. A model without a price is `skipped`, never guessed."""
    table = {**shipped_prices(), **(prices or {})}

    def grade(trajectory: Trajectory) -> GradeResult:
        if skip := _unmetered(trajectory):
            return skip
        usd = 0.0
        for call in trajectory.llm_calls:
            price = price_of(call.model, table)
            if price is None:
                model = f"model {call.model!r}" if call.model else "an unnamed model"
                return GradeResult.skipped(f"no price for {model} ({_llm_text(call)}); add it under `prices:`")
            usd += ((call.input_tokens or 0) * price.input + (call.output_tokens or 0) * price.output) / 1e6
        return GradeResult.check(usd <= max, f"cost ${usd:.6f} (max ${max:g})", usd=usd)

    return grade


@grader("duration", scopes=("run", "tool_call", "llm_call"))
def duration(max: Annotated[Duration, Field(gt=0)]) -> GradeFn:
    """The run's wall time, its root span's start to end, is at most `max` (seconds, or '30s', '2m')."""

    def grade(trajectory: Trajectory) -> GradeResult:
        took = trajectory.duration_s
        if took is None:
            return GradeResult.skipped("the trace gives no start and end time")
        return GradeResult.check(took <= max, f"took {took:.3f}s (max {max:g}s)", duration_s=took)

    return grade


@grader("context_growth", reads=("llm_calls",))
def context_growth(max_ratio: Annotated[float, Field(gt=0)]) -> GradeFn:
    """The last model call's input tokens are at most `max_ratio` times the first's: how far the context grew
    over the run. Needs two model calls with token usage."""

    def grade(trajectory: Trajectory) -> GradeResult:
        metered = [c.input_tokens for c in trajectory.llm_calls if c.input_tokens is not None]
        if len(metered) < 2:
            return GradeResult.skipped(
                f"growth needs two model calls with input token usage; the run has {len(metered)}"
            )
        if not metered[0]:
            return GradeResult.skipped("the first model call reports 0 input tokens: growth from 0 has no ratio")
        first, last = metered[0], metered[-1]
        ratio = last / first
        rationale = f"input tokens grew {ratio:.2f}x, from {first} to {last} (max {max_ratio:g}x)"
        return GradeResult.check(ratio <= max_ratio, rationale, ratio=ratio, first=first, last=last)

    return grade
