"""Microsoft vally's trajectory and output graders (`type: tool-calls` + `config:`), with vally's semantics.

Every pattern is a JavaScript regular expression (unanchored, `(?ims)` prefixes turned into flags), so
matching goes through `jsregex`. Configuration mistakes vally reports at lint time are `ConfigError`s
at load time here, naming the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from otelgrade.core.errors import ConfigError
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Part, ToolCall, Trajectory
from otelgrade.grade.graders.base import GRADER_TYPES, AlertPolicy, GradeFn, grader
from otelgrade.grade.graders.jsregex import JsRegex, JsRegexError, compile_prefixed, js_stringify
from otelgrade.grade.graders.specs import GraderSpec, native_file, native_shape

_ROLES = ("required", "disallowed", "sequence")
_FIELDS = ("name", "command", "path", "args", "pattern", "result", "min_count", "final", "at_step", "before_step")
_REQUIRED_ONLY = ("min_count", "final", "at_step", "before_step")


def _regex(pattern: Any, where: str) -> JsRegex:
    if not isinstance(pattern, str):
        raise ConfigError(f"must be a regular expression string, not {pattern!r}", where)
    try:
        return compile_prefixed(pattern)
    except JsRegexError as exc:
        raise ConfigError(str(exc), where) from None


def _int(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"must be an integer >= {minimum}, not {value!r}", where)
    return value


# --- tool-calls --------------------------------------------------------------------------------


_ARGUMENT_KEYS = {"command", "path", "args", "pattern"}


def _matcher_reads(params: Mapping[str, Any]) -> frozenset[Part]:
    """tool-calls reads arguments when a matcher looks at them, results when one looks at `result`."""
    matchers = [m for key in ("required", "disallowed", "sequence") for m in _as_list(params.get(key))]
    keys = {k for m in matchers if isinstance(m, Mapping) for k in m}
    parts: set[Part] = {"tool_arguments"} if keys & _ARGUMENT_KEYS else set()
    return frozenset(parts | ({"tool_results"} if "result" in keys else set()))


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


@dataclass(frozen=True)
class ToolMatch:
    """One entry of `required`, `disallowed` or `sequence`: regexes on a call, plus required-only limits."""

    name: JsRegex
    command: JsRegex | None = None
    path: JsRegex | None = None
    args: tuple[tuple[str, JsRegex], ...] = ()
    pattern: JsRegex | None = None
    result: JsRegex | None = None
    min_count: int = 1
    final: bool = False
    at_step: int | None = None
    before_step: int | None = None

    def matches(self, call: ToolCall) -> bool:
        """Name and argument filters (only string-valued arguments are matchable), and the result filter."""
        if not self.name.test(call.name):
            return False
        arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
        for arg, regex in (("command", self.command), ("path", self.path), *self.args):
            value = arguments.get(arg)
            if regex is not None and not (isinstance(value, str) and regex.test(value)):
                return False
        if self.pattern is not None and not self.pattern.test(_serialized(call.arguments)):
            return False
        return self.result is None or (call.result is not None and self.result.test(call.result))

    def in_position(self, step: int) -> bool:
        return (self.at_step is None or step == self.at_step) and (self.before_step is None or step < self.before_step)

    def describe(self) -> str:
        return self.name.source if self.name.flags == "" else f"(?{self.name.flags}){self.name.source}"


def _serialized(arguments: Any) -> str:
    if arguments is None:
        return "{}"
    return arguments if isinstance(arguments, str) else js_stringify(arguments)


def parse_tool_match(raw: Any, role: str, where: str) -> ToolMatch:
    """A ToolMatch from a string (a name regex) or a mapping, checked against the list it sits in."""
    if isinstance(raw, str):
        return ToolMatch(name=_regex(raw, where))
    if not isinstance(raw, Mapping):
        raise ConfigError("an entry must be a tool-name regex or a mapping with `name`", where)
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"unknown field(s) {unknown}; a ToolMatch has {', '.join(_FIELDS)}", where)
    if "name" not in raw:
        raise ConfigError("a ToolMatch needs `name` (a regex on the tool name)", f"{where}.name")
    if role != "required":
        for key in _REQUIRED_ONLY:
            if key in raw:
                raise ConfigError(f"`{key}` is only allowed on required entries, not on {role}", f"{where}.{key}")
    if role == "sequence" and "result" in raw:
        raise ConfigError(
            "`result` is not supported on sequence entries (they match before the result is known)", f"{where}.result"
        )
    args = raw.get("args") or {}
    if not isinstance(args, Mapping):
        raise ConfigError("`args` must map argument names to regexes", f"{where}.args")
    final = raw.get("final", False)
    if not isinstance(final, bool):
        raise ConfigError(f"must be true or false, not {final!r}", f"{where}.final")
    at_step = _int(raw["at_step"], f"{where}.at_step", 0) if raw.get("at_step") is not None else None
    before_step = _int(raw["before_step"], f"{where}.before_step", 1) if raw.get("before_step") is not None else None
    if at_step is not None and before_step is not None and at_step >= before_step:
        raise ConfigError(
            f"at_step ({at_step}) must be less than before_step ({before_step}); no step satisfies both", where
        )

    def optional(key: str) -> JsRegex | None:
        return _regex(raw[key], f"{where}.{key}") if raw.get(key) is not None else None

    return ToolMatch(
        name=_regex(raw["name"], f"{where}.name"),
        command=optional("command"),
        path=optional("path"),
        args=tuple((str(k), _regex(v, f"{where}.args.{k}")) for k, v in args.items()),
        pattern=optional("pattern"),
        result=optional("result"),
        min_count=_int(raw.get("min_count", 1), f"{where}.min_count", 1),
        final=final,
        at_step=at_step,
        before_step=before_step,
    )


def _entries(value: Any, role: str) -> list[ToolMatch]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError("must be a list of tool-name regexes or ToolMatch mappings", role)
    return [parse_tool_match(raw, role, f"{role}[{i}]") for i, raw in enumerate(value)]


def agent_step_base(trajectory: Trajectory) -> int:
    """The step number of the run's first model response: vally counts agent steps from 0 at that response,
    whichever base the trajectory's step numbers use."""
    return min((c.step for c in trajectory.llm_calls), default=0)


def _guardrail_when_only_disallowed(params: Mapping[str, Any]) -> AlertPolicy:
    """tool-calls that only lists `disallowed` tools is a guardrail: any such call pages. With `required` or
    `sequence` it also grades how the agent went about the task, which an objective measures better."""
    only_disallowed = params.get("disallowed") and not params.get("required") and not params.get("sequence")
    return "any" if only_disallowed else "objective"


@grader("vally.tool-calls", deprecated=("tool-calls",), reads=_matcher_reads, alert=_guardrail_when_only_disallowed)
def tool_calls(required: Any = None, disallowed: Any = None, sequence: Any = None) -> GradeFn:
    """vally tool-calls: every `required` entry is satisfied, no call matches a `disallowed` entry, and the
    `sequence` entries match calls in that relative order. Names and argument filters are unanchored JS
    regexes; `at_step`/`before_step` use each call's 0-based agent step. Score 1.0 or 0.0."""
    lists = {role: _entries(value, role) for role, value in zip(_ROLES, (required, disallowed, sequence), strict=True)}
    if not any(lists.values()):
        raise ConfigError("tool-calls needs at least one of `required`, `disallowed` or `sequence`")

    def grade(trajectory: Trajectory) -> GradeResult:
        calls = trajectory.tool_calls
        last = calls[-1] if calls else None
        first = agent_step_base(trajectory)
        problems = []
        for entry in lists["required"]:
            found = [c for c in calls if entry.matches(c) and entry.in_position(c.step - first)]
            if len(found) < entry.min_count:
                problems.append(f"required {entry.describe()!r}: {len(found)} matching call(s), need {entry.min_count}")
            elif entry.final and (last is None or not any(c is last for c in found)):
                problems.append(f"required {entry.describe()!r}: the last tool call does not match")
        for entry in lists["disallowed"]:
            hits = [c.name for c in calls if entry.matches(c)]
            if hits:
                problems.append(f"disallowed {entry.describe()!r} was called ({', '.join(hits)})")
        order = lists["sequence"]
        done = 0
        for call in calls:
            if done < len(order) and order[done].matches(call):
                done += 1
        if done < len(order):
            problems.append(f"sequence stops at {order[done].describe()!r} ({done} of {len(order)} in order)")
        if problems:
            return GradeResult.check(False, "; ".join(problems))
        return GradeResult.check(True, f"{len(calls)} tool call(s) satisfy every required/disallowed/sequence entry")

    return grade


# --- output and transcript text ---------------------------------------------------------------


def _needle_check(text: str, substring: str, case_sensitive: bool) -> bool:
    return substring in text if case_sensitive else substring.lower() in text.lower()


def _contains(substring: str, case_sensitive: bool, negate: bool) -> GradeFn:
    def grade(trajectory: Trajectory) -> GradeResult:
        found = _needle_check(trajectory.output or "", substring, case_sensitive)
        passed = found != negate
        return GradeResult.check(passed, f"{substring!r} {'found' if found else 'not found'} in the output")

    return grade


@grader("vally.output-contains", deprecated=("output-contains",), reads=("output",))
def output_contains(substring: str, case_sensitive: bool = False, negate: bool = False) -> GradeFn:
    """vally output-contains: `substring` occurs in the final output (case-insensitive by default)."""
    return _contains(substring, case_sensitive, negate)


@grader("vally.output-not-contains", deprecated=("output-not-contains",), reads=("output",))
def output_not_contains(substring: str, case_sensitive: bool = False) -> GradeFn:
    """vally output-not-contains: `substring` does not occur in the final output."""
    return _contains(substring, case_sensitive, True)


def _matches(pattern: str, negate: bool) -> GradeFn:
    regex = _regex(pattern, "pattern")

    def grade(trajectory: Trajectory) -> GradeResult:
        found = regex.test(trajectory.output or "")
        return GradeResult.check(found != negate, f"/{pattern}/ {'matches' if found else 'does not match'} the output")

    return grade


@grader("vally.output-matches", deprecated=("output-matches",), reads=("output",))
def output_matches(pattern: str, negate: bool = False) -> GradeFn:
    """vally output-matches: a JavaScript regex (with `(?ims)` prefix flags) tested on the final output."""
    return _matches(pattern, negate)


@grader("vally.output-not-matches", deprecated=("output-not-matches",), reads=("output",))
def output_not_matches(pattern: str) -> GradeFn:
    """vally output-not-matches: the regex does not match the final output."""
    return _matches(pattern, True)


def assistant_messages(trajectory: Trajectory) -> list[str]:
    """Every assistant message's text, oldest first (the transcript vally's transcript graders read)."""
    return trajectory.assistant_texts()


def _transcript(substring: str, case_sensitive: bool, negate: bool) -> GradeFn:
    def grade(trajectory: Trajectory) -> GradeResult:
        texts = assistant_messages(trajectory)
        hits = sum(_needle_check(t, substring, case_sensitive) for t in texts)
        if negate:
            passed = bool(texts) and hits == 0
            why = "no assistant messages" if not texts else f"{hits} assistant message(s) contain {substring!r}"
        else:
            passed = hits > 0
            why = f"{hits} of {len(texts)} assistant message(s) contain {substring!r}"
        return GradeResult.check(passed, why)

    return grade


@grader("vally.transcript-contains", deprecated=("transcript-contains",), reads=("messages",))
def transcript_contains(substring: str, case_sensitive: bool = False, negate: bool = False) -> GradeFn:
    """vally transcript-contains: some assistant message of the run (not only the last) contains `substring`."""
    return _transcript(substring, case_sensitive, negate)


@grader("vally.transcript-not-contains", deprecated=("transcript-not-contains",), reads=("messages",))
def transcript_not_contains(substring: str, case_sensitive: bool = False) -> GradeFn:
    """vally transcript-not-contains: no assistant message contains `substring` (fails with no messages)."""
    return _transcript(substring, case_sensitive, True)


# --- budgets ---------------------------------------------------------------------------------


def _budget(what: str, max_value: float, measure: Any) -> GradeFn:
    if isinstance(max_value, bool) or not math.isfinite(max_value) or max_value < 0:
        raise ConfigError(f"max must be a finite number >= 0, not {max_value!r}", "max")

    def grade(trajectory: Trajectory) -> GradeResult:
        value = measure(trajectory)
        if value <= max_value:
            return GradeResult.check(True, f"{what} {value} within max {max_value}", score=1.0, value=value)
        score = max(0.0, 1.0 - (value - max_value) / max(max_value, 1))
        return GradeResult.check(False, f"{what} {value} over max {max_value}", score=score, value=value)

    return grade


@grader("vally.tool-call-count", deprecated=("tool-call-count",))
def tool_call_count(max: float, tools: list[str] | None = None) -> GradeFn:
    """vally tool-call-count: at most `max` tool calls (only those whose name matches a `tools` regex, if given).
    Over budget the score is max(0, 1 - (count - max) / max(max, 1))."""
    filters = [_regex(t, f"tools[{i}]") for i, t in enumerate(tools or [])]

    def count(t: Trajectory) -> int:
        return sum(1 for c in t.tool_calls if not filters or any(f.test(c.name) for f in filters))

    return _budget("tool calls", max, count)


@grader("vally.turn-count", deprecated=("turn-count",), reads=("messages",))
def turn_count(max: float) -> GradeFn:
    """vally turn-count: at most `max` agent turns (model responses)."""
    return _budget("turns", max, lambda t: t.steps)


@grader("vally.token-budget", deprecated=("token-budget",), reads=("llm_calls",))
def token_budget(max: float) -> GradeFn:
    """vally token-budget: at most `max` tokens, input plus output, over every model call of the run."""
    return _budget("tokens", max, lambda t: sum((c.input_tokens or 0) + (c.output_tokens or 0) for c in t.llm_calls))


@grader("vally.error-count", deprecated=("error-count",))
def error_count(max: float) -> GradeFn:
    """vally error-count: at most `max` errors (failed tool calls, plus the run itself if it failed)."""
    return _budget("errors", max, lambda t: sum(c.error for c in t.tool_calls) + (t.status == "error"))


@grader("vally.wall-time", deprecated=("wall-time",))
def wall_time(max: float) -> GradeFn:
    """vally wall-time: the run took at most `max` seconds."""
    return _budget("seconds", max, lambda t: t.duration_s or 0.0)


# --- completion and behaviour ----------------------------------------------------------------


@grader("vally.completed", deprecated=("completed",), reads=("output",))
def completed() -> GradeFn:
    """vally completed: a non-empty output, no error, and at least one finished agent turn."""

    def grade(trajectory: Trajectory) -> GradeResult:
        if not (trajectory.output or "").strip():
            return GradeResult.check(False, "Agent produced no output")
        if trajectory.status == "error":
            return GradeResult.check(False, f"the run ended in an error: {trajectory.error or 'unknown'}")
        turns = trajectory.steps or len(trajectory.llm_calls) or len(assistant_messages(trajectory))
        if not turns:
            return GradeResult.check(False, "no agent turn finished")
        return GradeResult.check(True, "completed")

    return grade


@grader("vally.exit-success", deprecated=("exit-success",), reads=("output",))
def exit_success() -> GradeFn:
    """vally exit-success: the run produced a non-empty output."""

    def grade(trajectory: Trajectory) -> GradeResult:
        passed = bool((trajectory.output or "").strip())
        return GradeResult.check(passed, "output present" if passed else "Agent produced no output")

    return grade


_SKILL_TOOLS = ("skill", "load_skill", "activate_skill", "use_skill", "invoke_skill")
_SKILL_ARGS = ("skill", "name", "skill_name")


def skill_activations(trajectory: Trajectory, tools: Sequence[str] = _SKILL_TOOLS) -> list[str]:
    """Skills the run activated: calls to a skill-loading tool, named by its `skill`/`name` argument."""
    lowered = {t.lower() for t in tools}
    found = []
    for call in trajectory.tool_calls:
        if call.name.lower() in lowered and isinstance(call.arguments, Mapping):
            name = next((call.arguments[a] for a in _SKILL_ARGS if isinstance(call.arguments.get(a), str)), None)
            if name:
                found.append(name)
    return found


@grader("vally.skill-invocation", deprecated=("skill-invocation",))
def skill_invocation(
    required: list[str] | None = None, disallowed: list[str] | None = None, skill_tools: list[str] | None = None
) -> GradeFn:
    """vally skill-invocation: exact skill names that must / must not be activated. A skill activation is a
    call to one of `skill_tools` (default: skill, load_skill, activate_skill, ...) naming the skill."""
    need, forbid = list(required or []), list(disallowed or [])
    if not need and not forbid:
        raise ConfigError("skill-invocation needs `required` or `disallowed`")
    overlap = sorted(set(need) & set(forbid))
    if overlap:
        raise ConfigError(f"skill(s) {overlap} are both required and disallowed", "disallowed")
    tools = tuple(skill_tools or _SKILL_TOOLS)

    def grade(trajectory: Trajectory) -> GradeResult:
        active = set(skill_activations(trajectory, tools))
        missing = [s for s in need if s not in active]
        used = [s for s in forbid if s in active]
        problems = [f"missing {missing}"] if missing else []
        problems += [f"disallowed {used}"] if used else []
        return GradeResult.check(not problems, "; ".join(problems) or f"skills activated: {sorted(active)}")

    return grade


@grader("vally.max-repeat", deprecated=("max-repeat",), reads=("tool_arguments",))
def max_repeat(
    max: int,
    match: Literal["observation", "name", "name-args"] = "observation",
    tools: list[str] | None = None,
) -> GradeFn:
    """vally max-repeat: no action repeats more than `max` times in a row. `match` decides what counts as the
    same action: `name`, `name-args` (deep-equal arguments) or `observation` (same tool and same result)."""
    _int(max, "max", 0)
    filters = [_regex(t, f"tools[{i}]") for i, t in enumerate(tools or [])]

    def action(call: ToolCall) -> Any:
        if match == "name":
            return call.name
        if match == "name-args":
            return (call.name, js_stringify(call.arguments))
        return (call.name, call.result)

    def grade(trajectory: Trajectory) -> GradeResult:
        calls = [c for c in trajectory.tool_calls if not filters or any(f.test(c.name) for f in filters)]
        longest, run, worst = 0, 0, None
        for i, call in enumerate(calls):
            run = run + 1 if i and action(call) == action(calls[i - 1]) else 1
            if run > longest:
                longest, worst = run, call.name
        passed = longest <= max
        return GradeResult.check(passed, f"longest repeat {longest} ({worst}), max {max}", value=longest)

    return grade


# --- vally's config shape ----------------------------------------------------------------------


_BLOCK_KEYS = {"type", "config", "name", "threshold"}


@native_shape("vally")
def vally_block(block: Mapping[str, Any], key: str | None = None) -> list[GraderSpec] | None:
    """`{type: <vally grader type>, config: {...}}` as in a vally eval spec's `graders:` list."""
    type_name = block.get("type")
    if not isinstance(type_name, str) or set(block) - _BLOCK_KEYS:
        return None
    canonical = f"vally.{type_name}"
    if canonical not in GRADER_TYPES:
        return None
    config = block.get("config") or {}
    if not isinstance(config, Mapping):
        raise ConfigError("`config` must be a mapping of the grader's settings", "config")
    threshold = block.get("threshold")
    name = block.get("name") or key or type_name
    return [GraderSpec(type=canonical, name=str(name), params=dict(config), threshold=threshold)]


@native_file("vally")
def vally_file(doc: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """A vally eval spec: one suite per stimulus, so grader names stay unique within a suite."""
    if "stimuli" not in doc:
        return None
    name = str(doc.get("name") or "default")
    stimuli = [s for s in doc["stimuli"] or [] if isinstance(s, Mapping)]
    return [
        {"name": str(s.get("name") or f"{name}-{i}"), "graders": s.get("graders") or []} for i, s in enumerate(stimuli)
    ]
