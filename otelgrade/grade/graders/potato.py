"""Potato's programmatic evaluators (`potato.evaluators` 2.12), with Potato's exact semantics and quirks.

Configured as in a Potato experiment, `{name: <registry name>, params: {...}, key?: ...}`. Text evaluators
compare the run's output with the reference (`ground_truth` param, else the run's `ground_truth`);
trajectory evaluators compare the run's tool calls with a reference trajectory in any shape Potato reads
(OpenAI messages, `conversation` turns, a bare string, None) or a plain list of `{name, arguments}` calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import Pattern, PatternError
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.base import GradeFn, Grader, build_grader, grader, list_graders
from otelgrade.grade.graders.embeddings import Embedder, openai_embedder, potato_cosine, table_embedder
from otelgrade.grade.graders.potato_reference import (
    Call,
    agent_calls,
    args_match,
    as_text,
    greedy_matches,
    reference_calls,
)
from otelgrade.grade.graders.schemas import schema_validator
from otelgrade.grade.graders.specs import GraderSpec, native_file, native_shape

DEFAULT_THRESHOLD = 0.5  # continuous scores (accuracy, edit distance, similarity) pass at this, unless `threshold`
ARGS_MODES = ("exact", "ignore", "subset", "superset")
MATCH_MODES = ("strict", "unordered", "subset", "superset")
_LLM_EVALUATORS = ("answer_relevance", "context_relevance", "groundedness", "rubric_dag")
# Potato's LLM judges that otelgrade's judge graders provide.
_JUDGE_EVALUATORS = {"llm_trajectory_judge": "trajectory_judge", "agent_as_judge": "agent_judge"}
_PREFIX = "potato."


def _check_mode(value: str, allowed: Sequence[str], key: str) -> None:
    if value not in allowed:
        raise ConfigError(f"{key} must be one of {', '.join(allowed)}; got {value!r}", key)


def _reference(ground_truth: Any, trajectory: Trajectory) -> Any:
    return ground_truth if ground_truth is not None else trajectory.ground_truth


# --- trajectory evaluators -------------------------------------------------------------------


@grader("potato.trajectory_match", deprecated=("trajectory_match",), reads=("tool_arguments",))
def trajectory_match(
    mode: str = "strict",
    tool_args_match_mode: str = "exact",
    tool_args_match_overrides: dict[str, str] | None = None,
    ground_truth: Any = None,
    key: str | None = None,
) -> GradeFn:
    """Potato TrajectoryMatchEvaluator: the run's tool calls against a reference trajectory.

    `strict` same calls in order; `unordered` same multiset; `subset` every agent call is in the reference;
    `superset` every reference call was made. Matching is greedy and, under `subset`, the argument check is
    applied with agent and reference swapped, exactly as in Potato. An invalid per-tool override is only
    noticed when that tool is compared (an `error` grade), as in Potato.
    """
    _check_mode(mode, MATCH_MODES, "mode")
    _check_mode(tool_args_match_mode, ARGS_MODES, "tool_args_match_mode")
    overrides = dict(tool_args_match_overrides or {})

    def matches(agent: Call, ref: Call) -> bool:
        if agent.name != ref.name:
            return False
        return args_match(overrides.get(agent.name, tool_args_match_mode), agent.args, ref.args)

    def grade(trajectory: Trajectory) -> GradeResult:
        agent = agent_calls(trajectory)
        ref = reference_calls(_reference(ground_truth, trajectory))
        meta: dict[str, Any] = {
            "key": key or "trajectory_match",
            "mode": mode,
            "tool_args_match_mode": tool_args_match_mode,
            "agent_tools": [c.name for c in agent],
            "reference_tools": [c.name for c in ref],
        }
        try:
            if mode == "strict":
                passed = len(agent) == len(ref) and all(matches(a, r) for a, r in zip(agent, ref, strict=True))
            elif mode == "unordered":
                passed = len(agent) == len(ref) and greedy_matches(ref, agent, matches) == len(ref)
            elif mode == "subset":  # Potato compares with the two sides swapped here
                passed = greedy_matches(agent, ref, matches) == len(agent)
            else:
                passed = greedy_matches(ref, agent, matches) == len(ref)
        except ValueError as exc:
            return GradeResult.error(f"tool_args_match_overrides: {exc}", config_error=True, **meta)
        verdict = "pass" if passed else "fail"
        rationale = f"{mode} match ({verdict}): {len(agent)} agent tool call(s) vs {len(ref)} reference"
        return GradeResult.check(passed, rationale, value=passed, **meta)

    return grade


@grader("potato.tool_use", deprecated=("tool_use",), reads=("tool_arguments",))
def tool_use(
    expected_tool: str,
    expected_args: dict[str, Any] | None = None,
    args_match_mode: str = "subset",
    key: str | None = None,
) -> GradeFn:
    """Potato ToolUseEvaluator: some call is named `expected_tool` (exactly) with `expected_args`.

    `subset` and `superset` both mean the expected args are contained in the call's; `exact` means equal;
    `ignore`, or no expected args, checks the name only.
    """
    _check_mode(args_match_mode, ARGS_MODES, "args_match_mode")
    expected = dict(expected_args or {})

    def satisfied(call: Call) -> bool:
        if call.name != expected_tool:
            return False
        if not expected or args_match_mode == "ignore":
            return True
        if args_match_mode == "exact":
            return call.args == expected
        return args_match("superset", call.args, expected)

    def grade(trajectory: Trajectory) -> GradeResult:
        calls = agent_calls(trajectory)
        passed = any(satisfied(c) for c in calls)
        rationale = f"{expected_tool} {'was' if passed else 'was not'} called" + (
            f" with {json.dumps(expected, default=str)}" if expected else ""
        )
        return GradeResult.check(passed, rationale, value=passed, key=key or f"tool_use:{expected_tool}")

    return grade


@grader("potato.tool_call_accuracy", deprecated=("tool_call_accuracy",), reads=("tool_arguments",))
def tool_call_accuracy(args_match_mode: str = "exact", ground_truth: Any = None, key: str | None = None) -> GradeFn:
    """Potato ToolCallAccuracyEvaluator: the share of reference calls the agent reproduced (any order,
    extras not penalised, greedy first-match). No reference calls: skipped (Potato's score is None)."""
    _check_mode(args_match_mode, ARGS_MODES, "args_match_mode")

    def matches(agent: Call, ref: Call) -> bool:
        return agent.name == ref.name and args_match(args_match_mode, agent.args, ref.args)

    def grade(trajectory: Trajectory) -> GradeResult:
        ref = reference_calls(_reference(ground_truth, trajectory))
        if not ref:
            return GradeResult.skipped("the reference has no tool calls", value=None, key=key or "tool_call_accuracy")
        hits = greedy_matches(ref, agent_calls(trajectory), matches)
        rationale = f"{hits} of {len(ref)} reference tool call(s) reproduced"
        return GradeResult.scored(
            hits / len(ref), DEFAULT_THRESHOLD, rationale, value=f"{hits}/{len(ref)}", key=key or "tool_call_accuracy"
        )

    return grade


# --- text evaluators -------------------------------------------------------------------------


@grader("potato.exact_match", deprecated=("exact_match",), reads=("output",))
def exact_match(
    case_sensitive: bool = True, strip: bool = True, ground_truth: Any = None, key: str | None = None
) -> GradeFn:
    """Potato ExactMatch: output text equals the reference text (ends stripped; `lower()` if not case-sensitive)."""

    def prepare(value: Any) -> str:
        text = as_text(value)
        text = text.strip() if strip else text
        return text if case_sensitive else text.lower()

    def grade(trajectory: Trajectory) -> GradeResult:
        passed = prepare(trajectory.output) == prepare(_reference(ground_truth, trajectory))
        rationale = "output equals the reference" if passed else "output differs from the reference"
        return GradeResult.check(passed, rationale, value=passed, key=key or "exact_match")

    return grade


@grader("potato.contains", deprecated=("contains",), reads=("output",))
def contains(
    substring: Any = None, case_sensitive: bool = False, ground_truth: Any = None, key: str | None = None
) -> GradeFn:
    """Potato Contains: `substring` (else the reference text) occurs literally in the output, case-insensitive
    by default; an empty needle never matches."""

    def grade(trajectory: Trajectory) -> GradeResult:
        needle = str(substring) if substring is not None else as_text(_reference(ground_truth, trajectory))
        haystack = as_text(trajectory.output)
        if not case_sensitive:
            needle, haystack = needle.lower(), haystack.lower()
        passed = bool(needle) and needle in haystack
        rationale = f"{needle[:80]!r} {'found' if passed else 'not found'} in the output"
        return GradeResult.check(passed, rationale, value=passed, key=key or "contains")

    return grade


@grader("potato.regex_match", deprecated=("regex_match",), reads=("output",))
def regex_match(pattern: str, flags: int = 0, key: str | None = None) -> GradeFn:
    """Potato RegexMatch: Python `re.search(pattern, output, flags)`; the reference is not used."""
    try:
        compiled = Pattern(pattern, flags)
    except PatternError as exc:
        raise ConfigError(f"invalid regular expression {pattern!r}: {exc}", "pattern") from None

    def grade(trajectory: Trajectory) -> GradeResult:
        passed = compiled.search(as_text(trajectory.output)) is not None
        return GradeResult.check(
            passed, f"/{pattern}/ {'matches' if passed else 'does not match'}", value=passed, key=key or "regex_match"
        )

    return grade


@grader("potato.edit_distance", deprecated=("edit_distance",), reads=("output",))
def edit_distance(ground_truth: Any = None, key: str | None = None) -> GradeFn:
    """Potato EditDistance: 1 - Levenshtein distance / longer length, over code points (both empty: 1.0)."""
    from rapidfuzz.distance import Levenshtein

    def grade(trajectory: Trajectory) -> GradeResult:
        a, b = as_text(trajectory.output), as_text(_reference(ground_truth, trajectory))
        distance = Levenshtein.distance(a, b)
        score = 1.0 - distance / max(len(a), len(b), 1)
        rationale = f"edit distance {distance} over {max(len(a), len(b))} characters"
        return GradeResult.scored(score, DEFAULT_THRESHOLD, rationale, value=distance, key=key or "edit_distance")

    return grade


@grader("potato.json_valid", deprecated=("json_valid",), reads=("output",))
def json_valid(key: str | None = None) -> GradeFn:
    """Potato JSONValid: the output text parses with Python's `json.loads` (which accepts NaN and Infinity)."""

    def grade(trajectory: Trajectory) -> GradeResult:
        try:
            json.loads(as_text(trajectory.output))
        except ValueError as exc:
            return GradeResult.check(False, f"invalid JSON: {exc}", value=False, key=key or "json_valid")
        return GradeResult.check(True, "valid JSON", value=True, key=key or "json_valid")

    return grade


@grader("potato.json_schema_match", deprecated=("json_schema_match",), reads=("output",))
def json_schema_match(schema: dict[str, Any] | bool, key: str | None = None, remote_refs: bool = False) -> GradeFn:
    """Potato JSONSchemaMatch: the output parses as JSON and validates against `schema` (latest draft unless
    `$schema` says otherwise; `format` not asserted). The schema itself is checked when the config loads.
    A `$ref` to another document is an `error` grade unless `remote_refs: true` lets it be fetched (once)."""
    import jsonschema
    import referencing.exceptions

    validator = schema_validator(schema, remote_refs)

    def grade(trajectory: Trajectory) -> GradeResult:
        label = key or "json_schema_match"
        try:
            instance = json.loads(as_text(trajectory.output))
        except ValueError as exc:
            return GradeResult.check(False, f"invalid JSON: {exc}", value=False, key=label)
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        except referencing.exceptions.Unresolvable as exc:
            fix = "" if remote_refs else "; remote references are fetched only with remote_refs: true"
            return GradeResult.error(f"the schema's $ref {exc.ref!r} cannot be resolved{fix}", key=label)
        if error is not None:
            return GradeResult.check(False, error.message, value=False, key=label)
        return GradeResult.check(True, "matches the schema", value=True, key=label)

    return grade


@grader("potato.embedding_similarity", deprecated=("embedding_similarity", "embedding_distance"), reads=("output",))
def embedding_similarity(
    model_name: str = "text-embedding-3-small",
    embed_fn: Callable[[str], Sequence[float]] | None = None,
    embed_table: dict[str, list[float]] | None = None,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    timeout: float = 30.0,
    ground_truth: Any = None,
    key: str | None = None,
) -> GradeFn:
    """Potato EmbeddingDistance: cosine similarity of the output's and the reference's embeddings.

    Embeddings come from `embed_fn` (in code), `embed_table` (text -> vector), or an OpenAI-compatible
    embeddings API (`model_name`, `base_url`, key from `api_key_env`); the API call is synchronous.
    Potato's cosine can be negative: `metadata["value"]` keeps it, `score` is clamped into 0..1.
    """
    embed: Embedder
    if embed_fn is not None:
        embed = embed_fn
    elif embed_table is not None:
        embed = table_embedder(embed_table)
    else:
        embed = openai_embedder(model_name, base_url, api_key_env, timeout)

    def grade(trajectory: Trajectory) -> GradeResult:
        label = key or "embedding_similarity"
        try:
            a = embed(as_text(trajectory.output))
            b = embed(as_text(_reference(ground_truth, trajectory)))
        except Exception as exc:  # an unreachable or failing embedder is an error grade, never a fail
            return GradeResult.error(f"embedding failed: {exc}", exception=type(exc).__name__, key=label)
        value = potato_cosine(a, b)
        score = min(1.0, max(0.0, value))
        return GradeResult.scored(score, DEFAULT_THRESHOLD, f"cosine similarity {value:.4f}", value=value, key=label)

    return grade


# --- Potato's registry and config shape ---------------------------------------------------------


def list_evaluators() -> list[str]:
    """The Potato registry names otelgrade provides (Potato's LLM-based evaluators map to `rubric`)."""
    return sorted(name.removeprefix(_PREFIX) for name in list_graders() if name.startswith(_PREFIX))


def build_evaluator(name: str, params: Mapping[str, Any] | None = None) -> Grader:
    """Build a Potato evaluator from its registry name and parameters, as Potato's `build_evaluator` does."""
    return build_grader(_grader_type(name), dict(params or {}))


def _grader_type(name: str) -> str:
    if name in list_evaluators():
        return _PREFIX + name
    if name in _JUDGE_EVALUATORS:
        return _JUDGE_EVALUATORS[name]
    if name in _LLM_EVALUATORS:
        raise ConfigError(
            f"Potato's {name} is an LLM judge; use otelgrade's `rubric` grader type for LLM-as-judge checks", "name"
        )
    raise ConfigError(f"unknown Potato evaluator {name!r}; available: {', '.join(list_evaluators())}", "name")


_BLOCK_KEYS = {"name", "evaluator", "params", "key", "threshold"}


@native_shape("potato")
def potato_block(block: Mapping[str, Any], key: str | None = None) -> list[GraderSpec] | None:
    """`{name: <Potato registry name>, params: {...}, key?: ...}` (or an automation action's `evaluator:`)."""
    if "type" in block or set(block) - _BLOCK_KEYS:
        return None
    name = block.get("evaluator", block.get("name"))
    if not isinstance(name, str):
        return None
    known = name in _JUDGE_EVALUATORS or name in list_evaluators()
    if "params" not in block and "evaluator" not in block and not known:
        return None
    type_name = _grader_type(name)
    params = block.get("params") or {}
    if not isinstance(params, Mapping):
        raise ConfigError("`params` must be a mapping of the evaluator's parameters", "params")
    threshold = block.get("threshold")
    own_name = block.get("name") if "evaluator" in block else None  # an automation action may name itself
    label = block.get("key") or params.get("key") or own_name or key
    if label is None:
        label = f"tool_use:{params.get('expected_tool')}" if name == "tool_use" else name
    return [GraderSpec(type=type_name, name=str(label), params=dict(params), threshold=threshold)]


@native_file("potato")
def potato_file(doc: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """A Potato experiment's evaluators, as one suite."""
    if "evaluators" not in doc:
        return None
    return [{"name": str(doc.get("name") or "default"), "graders": doc["evaluators"]}]
