"""evaldeck's code graders with evaldeck 0.1.5 semantics, the `all_of` combinator, and the reader for
evaldeck's test-case shape (`expected:`, `graders:`, `turns:`).

Each grader also accepts `defaults`: an `expected:` block whose values fill any parameter left unset,
as evaldeck's graders fall back to their test case. "Nothing to check" passes. evaldeck code graders
have no score; these return 1.0 or 0.0. A step, for `max_steps`, is an LLM call, a tool call or a
reasoning step: the count is `max(trajectory.steps, len(llm_calls) + len(tool_calls))`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from otelgrade.errors import ConfigError
from otelgrade.graders.base import GradeFn, GradeResult, GraderSpec, build_grader, grader, native_shape
from otelgrade.graders.extractors import split_turns
from otelgrade.trajectory import Trajectory

Defaults = dict[str, Any] | None


class Expected(BaseModel):
    """evaldeck's `expected:` block. Unknown keys are ignored, as evaldeck ignores them."""

    model_config = ConfigDict(extra="ignore")

    tools_called: list[str] | None = None
    tools_not_called: list[str] | None = None
    tool_call_order: list[str] | None = None
    output_contains: list[str] | None = None
    output_not_contains: list[str] | None = None
    output_equals: str | None = None
    output_matches: str | None = None
    max_steps: int | None = None
    min_steps: int | None = None
    max_tool_calls: int | None = None
    max_llm_calls: int | None = None
    task_completed: bool | None = None
    custom: dict[str, Any] | None = None


def _fallback(value: Any, defaults: Defaults, key: str) -> Any:
    return value if value is not None else (defaults or {}).get(key)


def _one_of(**spellings: Any) -> Any:
    given = {k: v for k, v in spellings.items() if v is not None}
    if len(given) > 1:
        raise ConfigError(f"give only one of {', '.join(given)}; they are the same parameter", next(iter(given)))
    return next(iter(given.values()), None)


def called_tools(trajectory: Trajectory) -> list[str]:
    """Names of the tools called, in order; calls without a name are left out, as in evaldeck."""
    return [c.name for c in trajectory.tool_calls if c.name]


def step_count(trajectory: Trajectory) -> int:
    return max(trajectory.steps, len(trajectory.llm_calls) + len(trajectory.tool_calls))


def _output(trajectory: Trajectory) -> str:
    return trajectory.output or ""


# --- output graders ----------------------------------------------------------------------------


@grader("evaldeck.contains", "output_contains", "ContainsGrader")
def contains(
    values: list[str] | str | None = None,
    case_sensitive: bool = False,
    field: str | None = None,
    defaults: Defaults = None,
) -> GradeFn:
    """Every value is a substring of the output (case-insensitive by default; `field` is ignored, as in evaldeck)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        wanted = _fallback(values, defaults, "output_contains")
        if not wanted:
            return GradeResult.check(True, "No values to check")
        wanted = list(wanted)
        out = _output(trajectory)
        haystack = out if case_sensitive else out.lower()
        missing = [v for v in wanted if (v if case_sensitive else v.lower()) not in haystack]
        if missing:
            return GradeResult.check(False, f"Missing values in output: {missing!r}")
        return GradeResult.check(True, f"All {len(wanted)} values found in output")

    return grade


@grader("evaldeck.not_contains", "output_not_contains", "NotContainsGrader")
def not_contains(
    values: list[str] | str | None = None,
    case_sensitive: bool = False,
    field: str | None = None,
    defaults: Defaults = None,
) -> GradeFn:
    """No value is a substring of the output (an empty-string value is always found)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        forbidden = _fallback(values, defaults, "output_not_contains")
        if not forbidden:
            return GradeResult.check(True, "No values to check")
        out = _output(trajectory)
        haystack = out if case_sensitive else out.lower()
        found = [v for v in forbidden if (v if case_sensitive else v.lower()) in haystack]
        if found:
            return GradeResult.check(False, f"Forbidden values found in output: {found!r}")
        return GradeResult.check(True, "No forbidden values found")

    return grade


@grader("evaldeck.equals", "output_equals", "EqualsGrader")
def equals(
    expected: str | None = None,
    normalize_whitespace: bool = True,
    field: str | None = None,
    defaults: Defaults = None,
) -> GradeFn:
    """The output equals `expected`, after collapsing whitespace runs and trimming (by default).
    An empty `expected` counts as unset, as in evaldeck."""

    def norm(text: str) -> str:
        return " ".join(text.split()) if normalize_whitespace else text

    def grade(trajectory: Trajectory) -> GradeResult:
        want = expected or (defaults or {}).get("output_equals")
        if want is None:
            return GradeResult.check(True, "No expected value to check")
        if norm(_output(trajectory)) == norm(want):
            return GradeResult.check(True, "Output matches expected")
        return GradeResult.check(False, "Output does not match expected")

    return grade


@grader("evaldeck.regex", "output_matches", "RegexGrader")
def regex(pattern: str | None = None, flags: int = 0, field: str | None = None, defaults: Defaults = None) -> GradeFn:
    """`re.search(pattern, output, flags)`; an invalid pattern is an `error` grade, as in evaldeck
    (an empty pattern counts as unset)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        want = pattern or (defaults or {}).get("output_matches")
        if want is None:
            return GradeResult.check(True, "No pattern to check")
        try:
            matched = re.search(want, _output(trajectory), flags)
        except re.error as exc:
            return GradeResult.error(f"Invalid regex: {exc}")
        if matched:
            return GradeResult.check(True, f"Output matches pattern: {want}")
        return GradeResult.check(False, f"Output does not match pattern: {want}")

    return grade


# --- tool and budget graders -------------------------------------------------------------------


@grader("evaldeck.tool_called", "tools_called", "ToolCalledGrader")
def tool_called(
    required: list[str] | None = None, tools: list[str] | None = None, defaults: Defaults = None
) -> GradeFn:
    """Every required tool was called at least once (order and repeats do not matter)."""
    given = _one_of(required=required, tools=tools)

    def grade(trajectory: Trajectory) -> GradeResult:
        want = _fallback(given, defaults, "tools_called")
        if not want:
            return GradeResult.check(True, "No required tools to check")
        called = set(called_tools(trajectory))
        missing = sorted(set(want) - called)
        if missing:
            return GradeResult.check(False, f"Required tools not called: {missing!r}")
        return GradeResult.check(True, f"All {len(want)} required tools were called")

    return grade


@grader("evaldeck.tool_not_called", "tools_not_called", "ToolNotCalledGrader")
def tool_not_called(
    forbidden: list[str] | None = None, tools: list[str] | None = None, defaults: Defaults = None
) -> GradeFn:
    """None of the forbidden tools was called."""
    given = _one_of(forbidden=forbidden, tools=tools)

    def grade(trajectory: Trajectory) -> GradeResult:
        banned = _fallback(given, defaults, "tools_not_called")
        if not banned:
            return GradeResult.check(True, "No forbidden tools to check")
        called = set(called_tools(trajectory))
        hit = sorted(set(banned) & called)
        if hit:
            return GradeResult.check(False, f"Forbidden tools were called: {hit!r}")
        return GradeResult.check(True, "No forbidden tools were called")

    return grade


def is_subsequence(expected: Sequence[str], actual: Iterable[str]) -> bool:
    """Greedy: each expected name is matched by the next call with that name."""
    remaining = iter(actual)
    return all(any(name == got for got in remaining) for name in expected)


@grader("evaldeck.tool_order", "tool_call_order", "ToolOrderGrader")
def tool_order(
    expected_order: list[str] | None = None, tools: list[str] | None = None, defaults: Defaults = None
) -> GradeFn:
    """The tools were called in this order; other calls may come in between."""
    given = _one_of(expected_order=expected_order, tools=tools)

    def grade(trajectory: Trajectory) -> GradeResult:
        order = _fallback(given, defaults, "tool_call_order")
        if not order:
            return GradeResult.check(True, "No expected order to check")
        if is_subsequence(order, called_tools(trajectory)):
            return GradeResult.check(True, "Tools called in correct order")
        return GradeResult.check(False, "Tools not called in expected order")

    return grade


def _budget(key: str, label: str, count: Callable[[Trajectory], int], done: str) -> Callable[..., GradeFn]:
    def factory(max_value: int | None, defaults: Defaults) -> GradeFn:
        def grade(trajectory: Trajectory) -> GradeResult:
            limit = _fallback(max_value, defaults, key)
            if limit is None:
                return GradeResult.check(True, f"No max {label} defined")
            n = count(trajectory)
            if n > limit:
                return GradeResult.check(False, f"Too many {label}: {n} > {limit}")
            return GradeResult.check(True, done.format(n=n, limit=limit))

        return grade

    return factory


_max_steps = _budget("max_steps", "steps", step_count, "Completed in {n} steps (max: {limit})")
_max_tools = _budget("max_tool_calls", "tool calls", lambda t: len(t.tool_calls), "Made {n} tool calls (max: {limit})")
_max_llm = _budget("max_llm_calls", "LLM calls", lambda t: len(t.llm_calls), "Made {n} LLM calls (max: {limit})")


@grader("evaldeck.max_steps", "max_steps", "MaxStepsGrader")
def max_steps(max_steps: int | None = None, max: int | None = None, defaults: Defaults = None) -> GradeFn:
    """At most this many steps (LLM calls, tool calls and reasoning steps)."""
    return _max_steps(_one_of(max_steps=max_steps, max=max), defaults)


@grader("evaldeck.max_tool_calls", "max_tool_calls", "MaxToolCallsGrader")
def max_tool_calls(max_tool_calls: int | None = None, max: int | None = None, defaults: Defaults = None) -> GradeFn:
    """At most this many tool calls (calls without a name count too)."""
    return _max_tools(_one_of(max_tool_calls=max_tool_calls, max=max), defaults)


@grader("evaldeck.max_llm_calls", "max_llm_calls", "MaxLLMCallsGrader")
def max_llm_calls(max_llm_calls: int | None = None, max: int | None = None, defaults: Defaults = None) -> GradeFn:
    """At most this many LLM calls."""
    return _max_llm(_one_of(max_llm_calls=max_llm_calls, max=max), defaults)


@grader("evaldeck.task_completed", "task_completed", "TaskCompletedGrader")
def task_completed(require_success: bool = True, defaults: Defaults = None) -> GradeFn:
    """The run ended `ok` with a non-empty output. evaldeck quirk: `require_success: false` (or
    `expected.task_completed: false`) expects the run NOT to complete."""

    def grade(trajectory: Trajectory) -> GradeResult:
        flag = (defaults or {}).get("task_completed")
        expect = require_success if flag is None else bool(flag)
        completed = trajectory.status == "ok" and bool(trajectory.output)
        if completed and expect:
            return GradeResult.check(True, "Task completed successfully")
        if not completed and not expect:
            return GradeResult.check(True, "Task correctly did not complete (as expected)")
        if completed:
            return GradeResult.check(False, "Task completed but was expected to fail")
        status = "SUCCESS" if trajectory.status == "ok" else "ERROR"
        return GradeResult.check(
            False, f"Task not completed. Status: TraceStatus.{status}, Output: {bool(trajectory.output)}"
        )

    return grade


# --- combinators -------------------------------------------------------------------------------


def all_of(graders: Sequence[tuple[str, GradeFn]]) -> GradeFn:
    """AND of several graders: `error` if any errs, else `fail` if any fails, else `pass` (also when empty)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        results = [(name, fn(trajectory)) for name, fn in graders]
        return _combine(results)

    return grade


def _combine(results: Sequence[tuple[str, GradeResult]]) -> GradeResult:
    detail = {name: {"outcome": r.outcome, "rationale": r.rationale} for name, r in results}
    errors = [f"{n}: {r.rationale}" for n, r in results if r.outcome == "error"]
    if errors:
        return GradeResult.error("; ".join(errors), graders=detail)
    failed = [f"{n}: {r.rationale}" for n, r in results if not r.passed and r.outcome != "skipped"]
    if failed:
        return GradeResult.check(False, "; ".join(failed), graders=detail)
    if not results:
        return GradeResult.check(True, "Nothing to check", graders=detail)
    return GradeResult.check(True, f"All {len(results)} checks passed", graders=detail)


# Which grader each `expected:` key builds (evaldeck builds none for output_equals, output_matches, min_steps).
_EXPECTED_KEYS: dict[str, tuple[str, str]] = {
    "tools_called": ("evaldeck.tool_called", "required"),
    "tools_not_called": ("evaldeck.tool_not_called", "forbidden"),
    "tool_call_order": ("evaldeck.tool_order", "expected_order"),
    "output_contains": ("evaldeck.contains", "values"),
    "output_not_contains": ("evaldeck.not_contains", "values"),
    "max_steps": ("evaldeck.max_steps", "max_steps"),
    "max_tool_calls": ("evaldeck.max_tool_calls", "max_tool_calls"),
    "max_llm_calls": ("evaldeck.max_llm_calls", "max_llm_calls"),
    "task_completed": ("evaldeck.task_completed", "require_success"),
}
# evaldeck `graders:` entries: the type is lower-cased and only these are built; others are dropped.
_CONFIG_GRADERS = {"contains": "evaldeck.contains", "tool_called": "evaldeck.tool_called"}


def _parse_expected(block: Any, where: str) -> dict[str, Any]:
    if block is None:
        return {}
    if not isinstance(block, Mapping):
        raise ConfigError("`expected` must be a mapping such as {tools_called: [...], max_steps: 10}", where)
    try:
        return Expected.model_validate(block).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{first['msg']} (got {first.get('input')!r})", f"{where}.{loc}") from None


def _case_graders(expected: Mapping[str, Any], entries: Any, where: str) -> list[tuple[str, GradeFn]]:
    """The graders one evaldeck test case (or turn) implies, in evaldeck's order."""
    built: list[tuple[str, GradeFn]] = []
    for key, (type_name, param) in _EXPECTED_KEYS.items():
        value = expected.get(key)
        if value is None or (isinstance(value, list) and not value):
            continue
        built.append((key, build_grader(type_name, {param: value, "defaults": dict(expected)})))
    for i, entry in enumerate(entries or []):
        if not isinstance(entry, Mapping):
            raise ConfigError("each evaldeck grader must be a mapping {type, params}", f"{where}.graders[{i}]")
        if not isinstance(entry.get("type"), str):
            raise ConfigError(
                "each evaldeck grader needs a `type` (contains, tool_called, llm)", f"{where}.graders[{i}]"
            )
        kind = entry["type"].lower()
        if kind == "llm":
            raise ConfigError("evaldeck llm graders inside turns are not supported; use a rubric grader", where)
        if kind in _CONFIG_GRADERS:
            params = entry.get("params") or {}
            if not isinstance(params, Mapping):
                raise ConfigError("`params` must be a mapping", f"{where}.graders[{i}].params")
            try:
                built.append((kind, build_grader(_CONFIG_GRADERS[kind], {**params, "defaults": dict(expected)})))
            except ConfigError as exc:
                raise exc.at(f"{where}.graders[{i}].params") from None
    return built


@grader("evaldeck.expected")
def expected_block(
    expected: dict[str, Any] | None = None,
    graders: list[dict[str, Any]] | None = None,
    turns: list[dict[str, Any]] | None = None,
) -> GradeFn:
    """An evaldeck test case as one grader: the AND of the graders its `expected:` block and `graders:`
    list imply. With `turns:`, turn i of the run is graded against turn i's expectations, stopping at
    the first turn that fails (later turns are skipped); a turn with no expectations passes."""
    if turns is None:
        return all_of(_case_graders(_parse_expected(expected, "expected"), graders, "expected"))
    per_turn = [
        _case_graders(_parse_expected(t.get("expected"), f"turns[{i}].expected"), t.get("graders"), f"turns[{i}]")
        for i, t in enumerate(turns)
    ]

    def grade(trajectory: Trajectory) -> GradeResult:
        run_turns = split_turns(trajectory)
        results: list[tuple[str, GradeResult]] = []
        for i, checks in enumerate(per_turn):
            if not checks:
                continue
            if i >= len(run_turns):
                results.append((f"turn {i}", GradeResult.error(f"the run has {len(run_turns)} turn(s), no turn {i}")))
                break
            result = all_of(checks)(run_turns[i])
            results.append((f"turn {i}", result))
            if not result.passed:
                break
        return _combine(results)

    return grade


# --- evaldeck's config shape -------------------------------------------------------------------


@native_shape("evaldeck")
def evaldeck_specs(block: Mapping[str, Any], key: str | None) -> list[GraderSpec] | None:
    """An evaldeck test case or its `expected:` block (`{expected: {...}, graders: [...]}` or
    `{turns: [...]}`) -> one `evaldeck.expected` grader, plus a rubric judge per `llm` grader."""
    if "type" in block or "kind" in block:
        return None
    case_expected = "expected" in block and (block["expected"] is None or isinstance(block["expected"], Mapping))
    if not (case_expected or isinstance(block.get("turns"), list)):
        return None
    name = str(block.get("name") or key or "expected")
    entries = block.get("graders") or []
    if not isinstance(entries, list):
        raise ConfigError("`graders` must be a list of {type, params}", "graders")
    judges = [e for e in entries if isinstance(e, Mapping) and str(e.get("type", "")).lower() == "llm"]
    params: dict[str, Any] = {"graders": [e for e in entries if e not in judges]}
    if isinstance(block.get("turns"), list):
        params["turns"] = block["turns"]
    else:
        params["expected"] = block.get("expected")
    specs = [GraderSpec("evaldeck.expected", name, params)]
    for i, judge in enumerate(judges):
        judge_params = dict(judge.get("params") or {})
        judge_params.update({k: judge[k] for k in ("prompt", "model", "threshold") if judge.get(k) is not None})
        specs.append(GraderSpec("rubric", f"{name}.llm" + (f"{i + 1}" if len(judges) > 1 else ""), judge_params))
    return specs
