"""evaldeck's code graders with evaldeck 0.1.5 semantics, and the reader for evaldeck's test-case shape
(`expected:`, `graders:`, `turns:`), which builds an `all_of` (per turn: a `per_turn`) of them.

A grader left without a value falls back to its test case's `expected:` block, as in evaldeck
(`case_params` fills it in at load). "Nothing to check" passes. evaldeck code graders
have no score; these return 1.0 or 0.0. A step, for `max_steps`, is an LLM call, a tool call or a
reasoning step: the count is `max(trajectory.steps, len(llm_calls) + len(tool_calls))`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import PatternError, check_configured, search
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.base import GradeFn, Grader, build_grader, grader
from otelgrade.grade.graders.combinators import Named, all_of, per_turn
from otelgrade.grade.graders.specs import GraderSpec, native_file, native_shape


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


@grader("evaldeck.contains", "ContainsGrader", reads=("output",))
def contains(
    values: list[str] | str | None = None,
    case_sensitive: bool = False,
    field: str | None = None,
) -> GradeFn:
    """Every value is a substring of the output (case-insensitive by default; `field` is ignored, as in evaldeck)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        wanted = values
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


@grader("evaldeck.not_contains", "NotContainsGrader", reads=("output",))
def not_contains(
    values: list[str] | str | None = None,
    case_sensitive: bool = False,
    field: str | None = None,
) -> GradeFn:
    """No value is a substring of the output (an empty-string value is always found)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        forbidden = values
        if not forbidden:
            return GradeResult.check(True, "No values to check")
        out = _output(trajectory)
        haystack = out if case_sensitive else out.lower()
        found = [v for v in forbidden if (v if case_sensitive else v.lower()) in haystack]
        if found:
            return GradeResult.check(False, f"Forbidden values found in output: {found!r}")
        return GradeResult.check(True, "No forbidden values found")

    return grade


@grader("evaldeck.equals", "EqualsGrader", reads=("output",))
def equals(
    expected: str | None = None,
    normalize_whitespace: bool = True,
    field: str | None = None,
) -> GradeFn:
    """The output equals `expected`, after collapsing whitespace runs and trimming (by default).
    An empty `expected` counts as unset, as in evaldeck."""

    def norm(text: str) -> str:
        return " ".join(text.split()) if normalize_whitespace else text

    def grade(trajectory: Trajectory) -> GradeResult:
        want = expected
        if not want:
            return GradeResult.check(True, "No expected value to check")
        if norm(_output(trajectory)) == norm(want):
            return GradeResult.check(True, "Output matches expected")
        return GradeResult.check(False, "Output does not match expected")

    return grade


@grader("evaldeck.regex", "RegexGrader", reads=("output",))
def regex(pattern: str | None = None, flags: int = 0, field: str | None = None) -> GradeFn:
    """`re.search(pattern, output, flags)`; an invalid pattern is an `error` grade, as in evaldeck
    (an empty pattern counts as unset); one that backtracks catastrophically is refused with the config."""
    if pattern:
        try:
            check_configured(pattern, flags)
        except PatternError as exc:
            raise ConfigError(str(exc), "pattern") from None

    def grade(trajectory: Trajectory) -> GradeResult:
        want = pattern
        if not want:
            return GradeResult.check(True, "No pattern to check")
        try:
            matched = search(want, _output(trajectory), flags)
        except PatternError as exc:
            return GradeResult.error(f"Invalid regex: {exc}")
        if matched:
            return GradeResult.check(True, f"Output matches pattern: {want}")
        return GradeResult.check(False, f"Output does not match pattern: {want}")

    return grade


# --- tool and budget graders -------------------------------------------------------------------


@grader("evaldeck.tool_called", "ToolCalledGrader")
def tool_called(required: list[str] | None = None, tools: list[str] | None = None) -> GradeFn:
    """Every required tool was called at least once (order and repeats do not matter)."""
    given = _one_of(required=required, tools=tools)

    def grade(trajectory: Trajectory) -> GradeResult:
        want = given
        if not want:
            return GradeResult.check(True, "No required tools to check")
        called = set(called_tools(trajectory))
        missing = sorted(set(want) - called)
        if missing:
            return GradeResult.check(False, f"Required tools not called: {missing!r}")
        return GradeResult.check(True, f"All {len(want)} required tools were called")

    return grade


@grader("evaldeck.tool_not_called", "ToolNotCalledGrader", alert="any")
def tool_not_called(forbidden: list[str] | None = None, tools: list[str] | None = None) -> GradeFn:
    """None of the forbidden tools was called."""
    given = _one_of(forbidden=forbidden, tools=tools)

    def grade(trajectory: Trajectory) -> GradeResult:
        banned = given
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


@grader("evaldeck.tool_order", "ToolOrderGrader")
def tool_order(expected_order: list[str] | None = None, tools: list[str] | None = None) -> GradeFn:
    """The tools were called in this order; other calls may come in between."""
    given = _one_of(expected_order=expected_order, tools=tools)

    def grade(trajectory: Trajectory) -> GradeResult:
        order = given
        if not order:
            return GradeResult.check(True, "No expected order to check")
        if is_subsequence(order, called_tools(trajectory)):
            return GradeResult.check(True, "Tools called in correct order")
        return GradeResult.check(False, "Tools not called in expected order")

    return grade


Counted = Literal["all", "own_agent"]


def _budget(label: str, count: Callable[[Trajectory, Counted], int], done: str) -> Callable[..., GradeFn]:
    def factory(max_value: int | None, counted: Counted = "all") -> GradeFn:
        def grade(trajectory: Trajectory) -> GradeResult:
            limit = max_value
            if limit is None:
                return GradeResult.check(True, f"No max {label} defined")
            n = count(trajectory, counted)
            if n > limit:
                return GradeResult.check(False, f"Too many {label}: {n} > {limit}")
            return GradeResult.check(True, done.format(n=n, limit=limit))

        return grade

    return factory


_max_steps = _budget("steps", lambda t, _: step_count(t), "Completed in {n} steps (max: {limit})")
_max_tools = _budget(
    "tool calls",
    lambda t, counted: len(t.own_calls(t.tool_calls) if counted == "own_agent" else t.tool_calls),
    "Made {n} tool calls (max: {limit})",
)
_max_llm = _budget(
    "LLM calls",
    lambda t, counted: len(t.own_calls(t.llm_calls) if counted == "own_agent" else t.llm_calls),
    "Made {n} LLM calls (max: {limit})",
)


@grader("evaldeck.max_steps", "MaxStepsGrader", reads=("llm_calls",))
def max_steps(max_steps: int | None = None, max: int | None = None) -> GradeFn:
    """At most this many steps (LLM calls, tool calls and reasoning steps)."""
    return _max_steps(_one_of(max_steps=max_steps, max=max))


@grader("evaldeck.max_tool_calls", "MaxToolCallsGrader")
def max_tool_calls(max_tool_calls: int | None = None, max: int | None = None, count: Counted = "all") -> GradeFn:
    """At most this many tool calls (calls without a name count too). `count: own_agent` counts only the calls the
    run's own agent made, not its workers' (a request of several agents counts every agent's by default)."""
    return _max_tools(_one_of(max_tool_calls=max_tool_calls, max=max), count)


@grader("evaldeck.max_llm_calls", "MaxLLMCallsGrader", reads=("llm_calls",))
def max_llm_calls(max_llm_calls: int | None = None, max: int | None = None, count: Counted = "all") -> GradeFn:
    """At most this many LLM calls (`count: own_agent`: only the run's own agent's)."""
    return _max_llm(_one_of(max_llm_calls=max_llm_calls, max=max), count)


@grader("evaldeck.task_completed", "TaskCompletedGrader", reads=("output",))
def task_completed(require_success: bool = True) -> GradeFn:
    """The run ended `ok` with a non-empty output. evaldeck quirk: `require_success: false` (or
    `expected.task_completed: false`) expects the run NOT to complete."""

    def grade(trajectory: Trajectory) -> GradeResult:
        expect = require_success
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


# --- evaldeck's test-case shape --------------------------------------------------------------------

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
# How a grader falls back to its test case: (its parameter and that parameter's other spellings, the
# `expected:` key). An empty string counts as unset for equals and regex; `task_completed` in the case wins.
_FALLBACKS: dict[str, tuple[tuple[str, ...], str]] = {
    "evaldeck.contains": (("values",), "output_contains"),
    "evaldeck.not_contains": (("values",), "output_not_contains"),
    "evaldeck.equals": (("expected",), "output_equals"),
    "evaldeck.regex": (("pattern",), "output_matches"),
    "evaldeck.tool_called": (("required", "tools"), "tools_called"),
    "evaldeck.tool_not_called": (("forbidden", "tools"), "tools_not_called"),
    "evaldeck.tool_order": (("expected_order", "tools"), "tool_call_order"),
    "evaldeck.max_steps": (("max_steps", "max"), "max_steps"),
    "evaldeck.max_tool_calls": (("max_tool_calls", "max"), "max_tool_calls"),
    "evaldeck.max_llm_calls": (("max_llm_calls", "max"), "max_llm_calls"),
    "evaldeck.task_completed": (("require_success",), "task_completed"),
}
_EMPTY_IS_UNSET = {"evaldeck.equals", "evaldeck.regex"}
# evaldeck `graders:` entries: the type is lower-cased and only these are built; others are dropped.
_CONFIG_GRADERS = {"contains": "evaldeck.contains", "tool_called": "evaldeck.tool_called"}


def case_params(type_name: str, params: Mapping[str, Any], expected: Mapping[str, Any]) -> dict[str, Any]:
    """A grader's parameters with what it leaves unset taken from its test case's `expected:` block."""
    out = dict(params)
    if type_name not in _FALLBACKS:
        return out
    names, key = _FALLBACKS[type_name]
    value = expected.get(key)
    if value is None:
        return out
    if type_name == "evaldeck.task_completed":
        out["require_success"] = bool(value)
        return out
    given = [out.get(n) for n in names]
    unset = not any(given) if type_name in _EMPTY_IS_UNSET else all(v is None for v in given)
    if unset:
        for n in names[1:]:
            out.pop(n, None)
        out[names[0]] = value
    return out


def _parse_expected(block: Any, where: str) -> dict[str, Any]:
    if block is None:
        return {}
    if not isinstance(block, Mapping):
        raise ConfigError("`expected` must be a mapping such as {tools_called: [...], max_steps: 10}", where)
    try:
        return Expected.model_validate(block).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise ConfigError.from_validation(exc).at(where) from None


def _case_graders(expected: Mapping[str, Any], entries: Any, where: str) -> list[Named]:
    """The graders one evaldeck test case (or turn) implies, in evaldeck's order."""
    built: list[Named] = []
    for key, (type_name, param) in _EXPECTED_KEYS.items():
        value = expected.get(key)
        if value is None or (isinstance(value, list) and not value):
            continue
        built.append((key, build_grader(type_name, {param: value})))
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
            type_name = _CONFIG_GRADERS[kind]
            try:
                built.append((kind, build_grader(type_name, case_params(type_name, params, expected))))
            except ConfigError as exc:
                raise exc.at(f"{where}.graders[{i}].params") from None
    return built


@grader("evaldeck.expected")
def expected_block(
    expected: dict[str, Any] | None = None,
    graders: list[dict[str, Any]] | None = None,
    turns: list[dict[str, Any]] | None = None,
) -> Grader:
    """An evaldeck test case as one grader: the `all_of` of the graders its `expected:` block and `graders:`
    list imply. With `turns:`, a `per_turn` of each turn's expectations."""
    if turns is None:
        return all_of(_case_graders(_parse_expected(expected, "expected"), graders, "expected"))
    return per_turn(
        [
            _case_graders(_parse_expected(t.get("expected"), f"turns[{i}].expected"), t.get("graders"), f"turns[{i}]")
            for i, t in enumerate(turns)
        ]
    )


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


@native_file("evaldeck")
def evaldeck_file(doc: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """A whole evaldeck test case: one suite with the case as its one combined grader."""
    if "expected" not in doc and not isinstance(doc.get("turns"), list):
        return None
    case = {k: doc[k] for k in ("expected", "graders", "turns") if k in doc}
    return [{"name": str(doc.get("name") or "default"), "graders": [{"name": "expected", **case}]}]
