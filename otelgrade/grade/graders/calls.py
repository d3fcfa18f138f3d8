"""Graders of a single call, for grader blocks with `scope: tool_call` or `scope: llm_call` (see `scope.py`):
a tool call's arguments (against a JSON Schema, a text or a regex) and whether it succeeded; a model call's
finish reason. Latency (`duration`), tokens (`token_budget`) and judges are the run graders, run on the call.

Each gets the view of its run that holds just the graded call.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import Pattern, PatternError
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.base import GradeFn, grader
from otelgrade.grade.graders.schemas import schema_validator
from otelgrade.rebuild.messages import dumps_arguments

SHOWN_CHARS = 200  # of a call's arguments or error, in a rationale


def _shown(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


# --- tool calls --------------------------------------------------------------------------------


@grader("arguments_schema", reads=("tool_arguments",), scopes=("tool_call",))
def arguments_schema(schema: dict[str, Any] | bool, remote_refs: bool = False) -> GradeFn:
    """The tool call's arguments validate against the JSON Schema `schema` (the draft its `$schema` names, else
    the latest). Arguments that are not JSON are checked as the string the model wrote. A `$ref` to another
    document is an `error` grade unless `remote_refs: true` lets it be fetched (once)."""
    import jsonschema
    import referencing.exceptions

    validator = schema_validator(schema, remote_refs)

    def grade(trajectory: Trajectory) -> GradeResult:
        arguments = trajectory.tool_calls[0].arguments
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        except referencing.exceptions.Unresolvable as exc:
            fix = "" if remote_refs else "; remote references are fetched only with remote_refs: true"
            return GradeResult.error(f"the schema's $ref {exc.ref!r} cannot be resolved{fix}")
        if error is None:
            return GradeResult.check(True, "the arguments match the schema")
        at = "".join(f"[{p!r}]" for p in error.absolute_path)
        return GradeResult.check(
            False, f"the arguments do not match the schema{' at ' + at if at else ''}: {error.message}"
        )

    return grade


@grader("arguments_contain", reads=("tool_arguments",), scopes=("tool_call",))
def arguments_contain(text: str | list[str], ignore_case: bool = False) -> GradeFn:
    """The tool call's arguments, as JSON text (`{"city": "Paris"}`) or the string the model wrote, contain `text`
    (each of them, when it is a list)."""
    wanted = [text] if isinstance(text, str) else text
    if not wanted or not all(wanted):
        raise ConfigError("`text` needs at least one non-empty string", "text")

    def fold(s: str) -> str:
        return s.casefold() if ignore_case else s

    def grade(trajectory: Trajectory) -> GradeResult:
        arguments = dumps_arguments(trajectory.tool_calls[0].arguments)
        missing = [w for w in wanted if fold(w) not in fold(arguments)]
        if missing:
            listed = ", ".join(repr(m) for m in missing)
            return GradeResult.check(False, f"the arguments {_shown(arguments)} do not contain {listed}")
        return GradeResult.check(True, f"the arguments contain {', '.join(repr(w) for w in wanted)}")

    return grade


@grader("arguments_match", reads=("tool_arguments",), scopes=("tool_call",))
def arguments_match(pattern: str) -> GradeFn:
    """The tool call's arguments, as JSON text (`{"city": "Paris"}`) or the string the model wrote, match the
    regular expression `pattern` (searched anywhere in them; time-limited)."""
    try:
        compiled = Pattern(pattern)
    except PatternError as exc:
        raise ConfigError(f"invalid regex {pattern!r}: {exc}", "pattern") from None

    def grade(trajectory: Trajectory) -> GradeResult:
        arguments = dumps_arguments(trajectory.tool_calls[0].arguments)
        if compiled.search(arguments) is None:
            return GradeResult.check(False, f"the arguments {_shown(arguments)} do not match /{pattern}/")
        return GradeResult.check(True, f"the arguments match /{pattern}/")

    return grade


@grader("tool_succeeded", scopes=("tool_call",))
def tool_succeeded() -> GradeFn:
    """The tool call did not fail (its span's error status, or the error the framework recorded for it). A call
    the model asked for that no span shows executed, and whose result no later message shows, is `skipped`."""

    def grade(trajectory: Trajectory) -> GradeResult:
        call = trajectory.tool_calls[0]
        if call.error:
            return GradeResult.check(False, "the call failed" + (f": {_shown(call.result)}" if call.result else ""))
        if call.span_id is None and call.result is None:
            return GradeResult.skipped("the trace shows neither an execution of this call nor its result")
        return GradeResult.check(True, "the call succeeded")

    return grade


# --- model calls -------------------------------------------------------------------------------

# Providers' spellings of the GenAI conventions' finish reasons (stop, length, content_filter, tool_call, error).
_SPELLINGS = {
    "tool_calls": "tool_call",
    "tool_use": "tool_call",
    "function_call": "tool_call",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "safety": "content_filter",
    "recitation": "content_filter",
    "refusal": "content_filter",
    "guardrail_intervened": "content_filter",
}


def finish_kind(reason: str) -> str:
    """A provider's finish reason as the conventions name it: `tool-calls`, `tool_use` -> `tool_call`,
    `MAX_TOKENS`, `max_tokens` -> `length`, `SAFETY` -> `content_filter`; unknown reasons stay as written."""
    folded = reason.strip().lower().replace("-", "_")
    return _SPELLINGS.get(folded, folded)


@grader("finish_reason", scopes=("llm_call",))
def finish_reason(allow: list[str] | None = None, disallow: list[str] | None = None) -> GradeFn:
    """The model call ended for an acceptable reason: not one of `disallow` (default: length, content_filter,
    error: the response was cut off, filtered or failed), or, with `allow`, one of those. Providers' spellings
    count as the conventions' (`max_tokens` is `length`, `tool_use` is `tool_call`, `SAFETY` is
    `content_filter`). A call that records no finish reason is `skipped`."""
    if allow is not None and disallow is not None:
        raise ConfigError("give `allow` (the accepted reasons) or `disallow` (the rejected ones), not both", "allow")
    if allow is not None and not allow:
        raise ConfigError("`allow` needs at least one finish reason, e.g. [stop, tool_call]", "allow")
    accepted = None if allow is None else {finish_kind(r) for r in allow}
    rejected = {finish_kind(r) for r in (disallow if disallow is not None else ("length", "content_filter", "error"))}

    def grade(trajectory: Trajectory) -> GradeResult:
        recorded = trajectory.llm_calls[0].finish_reason
        if not recorded:
            return GradeResult.skipped("the call records no finish reason")
        shown = finish_kind(recorded)
        if shown not in accepted if accepted is not None else shown in rejected:
            why = f"not one of {', '.join(sorted(accepted))}" if accepted is not None else "disallowed"
            return GradeResult.check(False, f"finished with {shown} ({why})", finish_reason=recorded)
        return GradeResult.check(True, f"finished with {shown}", finish_reason=recorded)

    return grade
