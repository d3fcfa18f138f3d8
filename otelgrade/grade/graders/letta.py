"""letta-evals tool graders (`exact_match`, `contains`, `regex_match`, `ascii_printable_only`, custom
functions) with letta-evals 0.26 semantics, and the reader for letta's `graders:` config shape.

A tool grader extracts a submission (see `extractors`), then scores it 0.0 or 1.0 against the ground
truth: the grader's own `ground_truth` parameter, else the run's. The early exits are letta's: a run
with no messages scores 0 ("Empty trajectory"), an empty submission scores 0 ("Empty submission").
A list ground truth grades turn by turn (turn i against ground_truth[i]) and scores the mean.
letta has no pass/fail; a grade passes at score 1.0 unless a `threshold` says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import PatternError, PatternTimeout, search
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Part, Trajectory
from otelgrade.grade.graders.base import GradeFn, grader
from otelgrade.grade.graders.custom import GradingFunction, Sample, as_score, custom_grader, resolve
from otelgrade.grade.graders.extractors import (
    ExtractionError,
    check_extractor,
    extract,
    extractor_reads,
    is_empty,
    split_turns,
)
from otelgrade.grade.graders.specs import GraderSpec, native_file, native_shape

GroundTruth = str | list[str] | None

EMPTY_TRAJECTORY = "Empty trajectory - agent produced no messages"
EMPTY_SUBMISSION = "Empty submission - extractor found no content"
BUILTINS = ("exact_match", "contains", "regex_match", "ascii_printable_only")


# --- the built-in grading functions (letta's `(sample, submission)` signature) -----------------


@custom_grader
def exact_match(sample: Sample, submission: str) -> tuple[float, str]:
    """Equal after `str.strip()` on both sides; case-sensitive, no Unicode normalisation."""
    if not sample.ground_truth:
        return 0.0, "No ground_truth answer provided"
    same = submission.strip() == sample.ground_truth.strip()
    return float(same), f"Exact match: {same}"


@custom_grader
def contains(sample: Sample, submission: str) -> tuple[float, str]:
    """The ground truth is a substring of the submission after `str.lower()` (not trimmed, not casefold)."""
    if not sample.ground_truth:
        return 0.0, "No ground_truth answer provided"
    found = sample.ground_truth.lower() in submission.lower()
    return float(found), f"Contains ground_truth: {found}"


@custom_grader
def regex_match(sample: Sample, submission: str) -> tuple[float, str]:
    """The ground truth is a Python regex searched (unanchored) in the untrimmed submission."""
    if not sample.ground_truth:
        return 0.0, "No ground_truth regex pattern provided"
    try:
        matched = search(sample.ground_truth, submission) is not None
    except PatternError as exc:
        return 0.0, f"Invalid regex pattern: {exc}"
    return float(matched), f"Regex match: {matched}"


@custom_grader
def ascii_printable_only(sample: Sample, submission: str) -> tuple[float, str]:
    """Every character is in 32..126 once newlines and carriage returns are removed."""
    bad = list(dict.fromkeys(c for c in submission.replace("\n", "").replace("\r", "") if not 32 <= ord(c) <= 126))
    if bad:
        return 0.0, "Found non-printable ASCII characters: " + ", ".join(repr(c) for c in bad)
    return 1.0, "All characters printable ASCII (ignoring newlines)"


# --- the pipeline -------------------------------------------------------------------------------


def _grade_one(
    trajectory: Trajectory,
    function: GradingFunction,
    extractor: str,
    extractor_config: Mapping[str, Any],
    ground_truth: str | None,
) -> tuple[float, str, str, dict[str, Any]]:
    """(score, rationale, submission, metadata) for one trajectory, with letta's early exits."""
    if is_empty(trajectory):
        return 0.0, EMPTY_TRAJECTORY, "", {}
    submission = extract(trajectory, extractor, extractor_config)
    if not submission:
        return 0.0, EMPTY_SUBMISSION, submission or "", {}
    sample = Sample(trajectory.input, ground_truth, trajectory, dict(trajectory.attributes))
    score, rationale, metadata = as_score(function(sample, submission))
    return score, rationale, submission, metadata


def tool_grader(
    name: str,
    function: GradingFunction,
    extractor: str = "last_assistant",
    extractor_config: Mapping[str, Any] | None = None,
    ground_truth: GroundTruth = None,
) -> GradeFn:
    """A letta tool grader: extract, apply `function`, per turn when the ground truth is a list."""
    config = dict(extractor_config or {})
    check_extractor(extractor, config)

    def grade(trajectory: Trajectory) -> GradeResult:
        truth = ground_truth if ground_truth is not None else trajectory.ground_truth
        if not (truth is None or isinstance(truth, str) or _str_list(truth)):
            return GradeResult.error(f"ground truth must be a string or a list of strings, not {truth!r}")
        try:
            if isinstance(truth, list):
                return _per_turn(trajectory, truth)
            score, rationale, submission, metadata = _grade_one(trajectory, function, extractor, config, truth)
        except ExtractionError as exc:
            return GradeResult.error(str(exc), function=name)
        except PatternTimeout:
            raise  # not the grading function's failure: `grade_safely` grades it `error`, reason regex_timeout
        except Exception as exc:  # a user's grading function failed
            return GradeResult.error(f"{name} raised {type(exc).__name__}: {exc}", function=name)
        return GradeResult.scored(score, 1.0, rationale, submission=submission, **metadata)

    def _per_turn(trajectory: Trajectory, truths: list[str]) -> GradeResult:
        turns = split_turns(trajectory)
        results = []
        for i, truth in enumerate(truths):
            turn = turns[i] if i < len(turns) else None
            if turn is None:
                results.append((0.0, EMPTY_TRAJECTORY, ""))
            else:
                score, rationale, submission, _ = _grade_one(turn, function, extractor, config, truth)
                results.append((score, rationale, submission))
        passed = sum(1 for r in results if r[0] >= 1.0)
        marks = " ".join("✓" if r[0] >= 1.0 else "✗" for r in results)
        mean = sum(r[0] for r in results) / len(results) if results else 0.0
        return GradeResult.scored(
            mean,
            1.0,
            f"{passed}/{len(results)} passed: {marks}",
            submission=" | ".join(f"[Turn {i}] {r[2]}" for i, r in enumerate(results)),
            per_turn=[{"turn": i, "score": r[0], "rationale": r[1], "submission": r[2]} for i, r in enumerate(results)],
            turns_passed=passed,
            turns_total=len(results),
        )

    return grade


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _builtin(function_name: str) -> Callable[..., GradeFn]:
    _, function = resolve(function_name)

    def factory(
        extractor: str = "last_assistant",
        extractor_config: dict[str, Any] | None = None,
        ground_truth: GroundTruth = None,
    ) -> GradeFn:
        return tool_grader(function_name, function, extractor, extractor_config, ground_truth)

    factory.__doc__ = f"letta-evals `{function_name}`: {function.__doc__}"
    factory.__name__ = function_name
    return factory


def _extractor_reads(params: Mapping[str, Any]) -> frozenset[Part]:
    return extractor_reads(params.get("extractor"))


for _name in BUILTINS:
    old = ("ascii_printable_only",) if _name == "ascii_printable_only" else ()
    grader(f"letta.{_name}", reads=_extractor_reads, deprecated=old)(_builtin(_name))


@grader("letta.tool", reads=_extractor_reads)
def letta_tool(
    function: str,
    extractor: str = "last_assistant",
    extractor_config: dict[str, Any] | None = None,
    ground_truth: GroundTruth = None,
    module: str | None = None,
) -> GradeFn:
    """A letta tool grader running any registered grading function, built-in or `@custom_grader`
    (`module` names the file or module that defines it)."""
    name, fn = resolve(function, module)
    return tool_grader(name, fn, extractor, extractor_config, ground_truth)


# --- letta-evals' config shape ------------------------------------------------------------------

_JUDGE_KINDS = {"rubric", "model_judge", "letta_judge", "agent_judge"}


@native_shape("letta-evals")
def letta_specs(block: Mapping[str, Any], key: str | None) -> list[GraderSpec] | None:
    """`{kind: tool, function, extractor, extractor_config}` -> a letta tool grader; rubric kinds -> a judge."""
    kind = block.get("kind")
    if not isinstance(kind, str) or "type" in block:
        return None
    name = str(block.get("name") or key or block.get("function") or kind)
    params = {k: v for k, v in block.items() if k not in {"kind", "name", "display_name", "threshold"}}
    threshold = block.get("threshold")
    if kind == "tool":
        function = params.get("function")
        if not isinstance(function, str) or not function:
            raise ConfigError("a letta tool grader needs `function` (e.g. exact_match)", "function")
        if function in BUILTINS and "module" not in params:
            del params["function"]
            return [GraderSpec(f"letta.{function}", name, params, threshold)]
        return [GraderSpec("letta.tool", name, params, threshold)]
    if kind in _JUDGE_KINDS:
        agent = kind in {"letta_judge", "agent_judge"} or "agent_file" in params
        params.pop("agent_file", None)
        return [GraderSpec("agent_judge" if agent else "rubric", name, params, threshold)]
    raise ConfigError(f"unknown letta grader kind {kind!r}; use tool or rubric", "kind")


@native_file("letta-evals")
def letta_file(doc: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """A letta-evals suite file: its `graders:` mapping as one suite."""
    if not isinstance(doc.get("graders"), Mapping):
        return None
    return [{"name": str(doc.get("name") or "default"), "graders": doc["graders"]}]
