"""Graders made of graders: `all_of`, `any_of`, `not`, `per_turn`, `threshold`.

Each is an ordinary grader, usable from the config with its children written as grader blocks
(`{type: all_of, graders: [...]}`), and as functions over built graders (evaldeck's `expected:` block
is an `all_of`, its `turns:` a `per_turn`). Children may be judges: a combinator answers when they have.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, SkipValidation

from otelgrade.core.errors import ConfigError
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.base import Grader, Verdict, at_threshold, grade_safely, grader, innermost, is_judge, then
from otelgrade.grade.graders.extractors import split_turns
from otelgrade.grade.graders.specs import grader_specs
from otelgrade.grade.judges import DISABLED, JudgeClient

Named = tuple[str, Grader]


def _detail(results: Sequence[tuple[str, GradeResult]]) -> dict[str, Any]:
    return {name: {"outcome": r.outcome, "rationale": r.rationale} for name, r in results}


def conjunction(results: Sequence[tuple[str, GradeResult]]) -> GradeResult:
    """AND: `error` if any errs, else `fail` if any fails, else `pass` (also when there is nothing to check)."""
    detail = _detail(results)
    errors = [f"{n}: {r.rationale}" for n, r in results if r.outcome == "error"]
    if errors:
        return GradeResult.error("; ".join(errors), graders=detail)
    failed = [f"{n}: {r.rationale}" for n, r in results if r.outcome == "fail"]
    if failed:
        return GradeResult.check(False, "; ".join(failed), graders=detail)
    if not results:
        return GradeResult.check(True, "Nothing to check", graders=detail)
    return GradeResult.check(True, f"All {len(results)} checks passed", graders=detail)


def disjunction(results: Sequence[tuple[str, GradeResult]]) -> GradeResult:
    """OR: `pass` if any passes, else `error` if any errs, else `fail` (`skipped` when nothing was checked)."""
    detail = _detail(results)
    passed = [n for n, r in results if r.outcome == "pass"]
    if passed:
        return GradeResult.check(True, f"{passed[0]} passed", graders=detail)
    errors = [f"{n}: {r.rationale}" for n, r in results if r.outcome == "error"]
    if errors:
        return GradeResult.error("; ".join(errors), graders=detail)
    failed = [f"{n}: {r.rationale}" for n, r in results if r.outcome == "fail"]
    if failed:
        return GradeResult.check(False, "none passed: " + "; ".join(failed), graders=detail)
    return GradeResult.skipped("no check could be made", graders=detail)


@dataclass(frozen=True)
class Combined:
    """A grader made of graders: each child grades the run, then `rule` combines their results (by name)."""

    children: tuple[Named, ...]
    rule: Callable[[list[tuple[str, GradeResult]]], GradeResult]

    def __call__(self, trajectory: Trajectory, /) -> Verdict:
        verdicts = [grade_safely(g, trajectory) for _, g in self.children]
        names = [n for n, _ in self.children]
        return then(verdicts, lambda results: self.rule(list(zip(names, results, strict=True))))


def asks_a_model(grader: Grader) -> bool:
    """Whether the grader, or any grader it is made of, is a judge (which answers later, and costs a call)."""
    inner = innermost(grader)
    if isinstance(inner, Combined):
        return any(asks_a_model(child) for _, child in inner.children)
    return is_judge(inner)


def all_of(graders: Sequence[Named]) -> Grader:
    return Combined(tuple(graders), conjunction)


def any_of(graders: Sequence[Named]) -> Grader:
    return Combined(tuple(graders), disjunction)


def negation(child: Grader) -> Grader:
    def flip(results: list[tuple[str, GradeResult]]) -> GradeResult:
        r = results[0][1]
        if r.outcome not in ("pass", "fail"):
            return r
        return GradeResult.check(not r.passed, f"not ({r.rationale})", 1.0 - r.score if r.score is not None else None)

    return Combined((("", child),), flip)


def per_turn(turns: Sequence[Sequence[Named]]) -> Grader:
    """Turn i of the run graded by turn i's graders (all must pass), stopping at the first turn that fails;
    a turn without graders passes, and a turn the run does not have is an `error`. Its graders are code graders:
    one that asks a model is refused when it is built (it would answer later, turn by turn unknown)."""
    for i, checks in enumerate(turns):
        for name, check in checks:
            if asks_a_model(check):
                raise ConfigError(
                    f"per_turn takes code graders only, and turns[{i}] has judge {name!r}: a judge answers later, "
                    "so the turn that failed would not be known; judge the whole run in a grader of its own"
                )

    def graded(trajectory: Trajectory) -> GradeResult:
        run_turns = split_turns(trajectory)
        results: list[tuple[str, GradeResult]] = []
        for i, checks in enumerate(turns):
            if not checks:
                continue
            if i >= len(run_turns):
                results.append((f"turn {i}", GradeResult.error(f"the run has {len(run_turns)} turn(s), no turn {i}")))
                break
            verdict = all_of(checks)(run_turns[i])
            assert isinstance(verdict, GradeResult)  # code graders only, checked when built
            results.append((f"turn {i}", verdict))
            if not verdict.passed:
                break
        return conjunction(results)

    return graded


# --- the config's spelling -------------------------------------------------------------------------


def build_children(blocks: Any, where: str, judges: JudgeClient) -> list[Named]:
    """Grader blocks (a list, or a mapping of name -> block) built as named graders."""
    items = list(blocks.items()) if isinstance(blocks, dict) else [(None, b) for b in blocks or []]
    out: list[Named] = []
    for i, (key, block) in enumerate(items):
        try:
            out.extend((spec.name, spec.build(judges)) for spec in grader_specs(block, key))
        except ConfigError as exc:
            raise exc.at(f"{where}[{i}]" if key is None else f"{where}.{key}") from None
    return out


@grader("all_of")
def all_of_type(
    graders: list[dict[str, Any]] | dict[str, Any], _judges: SkipValidation[JudgeClient] = DISABLED
) -> Grader:
    """Passes when every grader in `graders` passes; an `error` of any is the result's error."""
    return all_of(build_children(graders, "graders", _judges))


@grader("any_of")
def any_of_type(
    graders: list[dict[str, Any]] | dict[str, Any], _judges: SkipValidation[JudgeClient] = DISABLED
) -> Grader:
    """Passes when at least one grader in `graders` passes."""
    return any_of(build_children(graders, "graders", _judges))


@grader("not")
def not_type(grader: dict[str, Any], _judges: SkipValidation[JudgeClient] = DISABLED) -> Grader:
    """Passes when `grader` fails (and fails when it passes); errors and skips stay as they are."""
    ((_, child),) = build_children([grader], "grader", _judges)
    return negation(child)


@grader("per_turn")
def per_turn_type(turns: list[list[dict[str, Any]]], _judges: SkipValidation[JudgeClient] = DISABLED) -> Grader:
    """Turn i of a multi-turn run graded by the i-th list of graders, stopping at the first failing turn."""
    return per_turn([build_children(t, f"turns[{i}]", _judges) for i, t in enumerate(turns)])


@grader("threshold")
def threshold_type(
    grader: dict[str, Any],
    min_score: Annotated[float, Field(ge=0.0, le=1.0)],
    _judges: SkipValidation[JudgeClient] = DISABLED,
) -> Grader:
    """`grader`'s score judged again: pass at `min_score` or above (the `threshold:` key does the same)."""
    ((_, child),) = build_children([grader], "grader", _judges)
    return at_threshold(child, min_score)
