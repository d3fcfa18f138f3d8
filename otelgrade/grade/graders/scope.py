"""Grading single calls: a grader block with `scope: tool_call` or `scope: llm_call` (and optionally `where:`)
grades each matching call of a run on its own and yields one grade per call, carrying the call's span id.

A call is graded as a view of its run that holds just that call (`call_view`): an ordinary `Trajectory`, so a
grader written for runs (`duration`, `token_budget`, a rubric judge) grades a call unchanged when its type
declares the scope (`@grader(..., scopes=...)`). A run without a matching call gets one `skipped` grade, so a
`where` that never matches shows instead of grading nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from otelgrade.core.errors import ConfigError, closest
from otelgrade.core.patterns import PatternError
from otelgrade.core.results import GradeResult, Scope
from otelgrade.core.trajectory import PARTS, LLMCall, Part, ToolCall, Trajectory, content_text
from otelgrade.grade.graders.base import NOT_CAPTURED, Grader, Verdict, grade_safely, grader_type, list_graders, then
from otelgrade.grade.route import value_matcher
from otelgrade.rebuild.messages import dumps_arguments, function_of

SCOPES: tuple[Scope, ...] = get_args(Scope)
NO_MATCH = "no_matching_call"
Call = ToolCall | LLMCall
CallFilter = Callable[[Call], bool]

# The `where` key of each call scope and the call field it tests.
_WHERE: dict[Scope, tuple[str, Callable[[Any], Any]]] = {
    "tool_call": ("tool", lambda call: call.name),
    "llm_call": ("model", lambda call: call.model),
}
_NOUN: dict[Scope, str] = {"tool_call": "tool call", "llm_call": "model call"}


def every_call(call: Call) -> bool:
    return True


def check_scope(type_name: str, scope: Any, where: Any) -> CallFilter:
    """The filter of a grader block's `where` after checking that `type_name` grades in `scope`; a `ConfigError`
    naming the key and the fix otherwise."""
    if scope not in SCOPES:
        word = str(scope).lower()
        guess = closest(word, SCOPES, limit=1) or [s for s in SCOPES if s.split("_")[0] == word.split("_")[0]]
        hint = f" (did you mean `{guess[0]}`?)" if guess else ""
        raise ConfigError(
            f"unknown scope {scope!r}{hint}; a grader grades `run` (the default: the whole run), `tool_call` (each "
            "tool call on its own) or `llm_call` (each model call on its own)",
            "scope",
        )
    entry = grader_type(type_name)
    if scope not in entry.scopes:
        if scope == "run":
            raise ConfigError(
                f"`{entry.plain_name}` grades one call at a time: add `scope: {entry.scopes[0]}` to this grader",
                "scope",
            )
        raise ConfigError(
            f"`{entry.plain_name}` cannot grade a single {_NOUN[scope]}; with `scope: {scope}` use one of: "
            f"{', '.join(sorted(grader_type(n).plain_name for n in list_graders(scope)))} (or drop `scope` to grade "
            "the whole run)",
            "scope",
        )
    if where is None or where == {}:
        return every_call
    if scope == "run":
        raise ConfigError(
            "`where` picks the calls a scoped grader grades: add `scope: tool_call` or `scope: llm_call`, or put the "
            "condition in the suite's `match`",
            "where",
        )
    key, read = _WHERE[scope]
    if not isinstance(where, Mapping):
        raise ConfigError(f"`where` must be a mapping such as {{{key}: <name or ^regex>}}, not {where!r}", "where")
    for unknown in where.keys() - {key}:
        raise ConfigError(
            f"unknown key {unknown!r} in `where`; with `scope: {scope}` it takes `{key}` (a name, a ^regex, or a "
            "list of them)",
            f"where.{unknown}",
        )
    try:
        accepts = value_matcher(where[key])
    except PatternError as exc:
        raise ConfigError(f"invalid regex {where[key]!r}: {exc}", f"where.{key}") from None
    return lambda call: accepts(read(call))


@dataclass(frozen=True)
class Scoped:
    """A configured grader and what it grades: the run (`scope: run`), or each call of `scope` that `accepts`
    lets through, as a view of the run holding that call."""

    grader: Grader
    scope: Scope = "run"
    accepts: CallFilter = every_call
    where: Mapping[str, Any] | None = None  # as configured, for the rationale of a run with no matching call

    def verdicts(self, trajectory: Trajectory) -> list[tuple[str | None, Verdict]]:
        """(the graded call's span id, its verdict) for each matching call; (None, the verdict) for a run, or for
        a run with no call to grade (`skipped`, with the reason)."""
        if self.scope == "run":
            return [(None, grade_safely(self.grader, trajectory))]
        calls: Sequence[Call] = trajectory.tool_calls if self.scope == "tool_call" else trajectory.llm_calls
        if not calls and self.scope == "llm_call" and "llm_calls" in trajectory.lacks:
            skip = GradeResult.skipped("content not captured: the trace carries no model calls", reason=NOT_CAPTURED)
            return [(None, skip)]
        chosen = [call for call in calls if self.accepts(call)]
        if not chosen:
            return [(None, GradeResult.skipped(self._no_match(bool(calls)), reason=NO_MATCH))]
        return [(call.span_id, self._graded(trajectory, call)) for call in chosen]

    def _graded(self, trajectory: Trajectory, call: Call) -> Verdict:
        label = call_label(call)
        verdict = grade_safely(self.grader, call_view(trajectory, call))
        return then([verdict], lambda r: r[0].model_copy(update={"rationale": f"{label}: {r[0].rationale}"}))

    def _no_match(self, any_calls: bool) -> str:
        noun = _NOUN[self.scope]
        if not any_calls:
            return f"the run made no {noun}s: nothing to grade"
        shown = ", ".join(f"{k}: {v}" for k, v in (self.where or {}).items())
        return f"no {noun} of the run matches `where` ({shown}): nothing to grade"


def call_label(call: Call) -> str:
    """How a grade names its call: `tool call get_weather at step 2`, `model call 3 (gpt-4o)`."""
    if isinstance(call, ToolCall):
        return f"tool call {call.name}" + (f" at step {call.step}" if call.step else "")
    return f"model call {call.step}" + (f" ({call.model})" if call.model else "")


def call_view(run: Trajectory, call: Call) -> Trajectory:
    """The run narrowed to one call: that call alone, its duration as the run's, its span as the run's span
    (the run's as parent), and what the trace lacks for it.

    A model call's view has the call's input and output messages as its conversation, the last user text among
    its input as the request and its response (text, else the tool calls it asked for) as the output. A tool
    call's view has no conversation; its status is the call's.
    """
    lacks: set[Part] = set(run.lacks)
    update: dict[str, Any] = {
        "span_id": call.span_id or run.span_id,
        "parent_span_id": run.span_id if call.span_id else run.parent_span_id,
        "start_time": None,
        "end_time": None,
        "duration_s": call.duration_s,
    }
    if isinstance(call, ToolCall):
        if call.arguments is None:
            lacks.add("tool_arguments")
        if call.result is None and not call.error:
            lacks.add("tool_results")
        update |= {
            "input": None,
            "output": None,
            "messages": [],
            "status": "error" if call.error else "ok",
            "error": (call.result or "the tool call failed") if call.error else None,
            "llm_calls": [],
            "tool_calls": [call],
            "steps": 0,
        }
    else:
        lacks.discard("llm_calls")  # a run may lack some of its model calls; this one is there
        request = _last_user_text(call.input_messages)
        response = _response_text(call.output_messages)
        if not call.input_messages:
            lacks.add("messages")
        if request is None:
            lacks.add("input")
        if not call.output_messages:
            lacks.add("output")
        update |= {
            "input": request,
            "output": response,
            "messages": [*call.input_messages, *call.output_messages],
            "status": "ok",
            "error": None,
            "llm_calls": [call],
            "tool_calls": [],
            "steps": 1,
        }
    update["lacks"] = [p for p in PARTS if p in lacks]
    return run.model_copy(update=update)


def _last_user_text(messages: list[dict[str, Any]]) -> str | None:
    texts = [content_text(m.get("content")) for m in messages if m.get("role") == "user"]
    return next((t for t in reversed(texts) if t), None)


def _response_text(messages: list[dict[str, Any]]) -> str | None:
    """A model response as text: its assistant text, else the tool calls it asked for (`name(arguments)`)."""
    assistant = [m for m in messages if m.get("role") == "assistant"]
    text = "\n".join(t for m in assistant if (t := content_text(m.get("content"))))
    asked = [
        f"{function.get('name') or '?'}({dumps_arguments(function.get('arguments'))})"
        for m in assistant
        for call in m.get("tool_calls") or ()
        if isinstance(call, dict) and (function := function_of(call))
    ]
    return text or "; ".join(asked) or None
