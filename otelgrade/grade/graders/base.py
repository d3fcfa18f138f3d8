"""The grader protocol and the registry of grader types.

A grader is one kind of thing: a callable that grades one `Trajectory` and returns a `GradeResult`, or a
`Future` of one when the answer comes later (a judge's model call). A grader type is a factory registered
by name with typed parameters and the scopes it grades in (whole runs, or single tool or model calls). A
judge's factory returns a `Judgement` (what to ask a model, how to read its answer); `build_grader` binds it
to the injected `JudgeClient`, which owns sampling, limits, queueing and retries. Code and judge graders are
then called the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import ConfigDict, ValidationError, validate_call

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import PatternTimeout, budget
from otelgrade.core.registry import Registry
from otelgrade.core.results import GradeResult, Scope
from otelgrade.core.trajectory import PARTS, NotCaptured, Part, Trajectory, guarded
from otelgrade.grade.judges import DISABLED, JudgeClient, Judgement

Verdict = GradeResult | Future[GradeResult]
NOT_CAPTURED = "content_not_captured"
Reads = Iterable[Part] | Callable[[Mapping[str, Any]], Iterable[Part]]
"""The parts of a run a grader type reads: fixed, or a function of its parameters."""
AlertPolicy = Literal["any", "objective", "none"]
ALERT_POLICIES: tuple[AlertPolicy, ...] = ("any", "objective", "none")
"""How a grader's failures page: on any failure in a window (a guardrail: a forbidden action, however rare, needs a
person), on its pass-rate objective's burn rates (a quality score), or not at all (a shadow suite's graders)."""
AlertDefault = AlertPolicy | Callable[[Mapping[str, Any]], AlertPolicy]
"""A grader type's default alert policy: fixed, or a function of its parameters."""


class Grader(Protocol):
    """Grades one run: a `GradeResult` now, or a `Future` of one (a judge that answers later)."""

    def __call__(self, trajectory: Trajectory, /) -> Verdict: ...


GradeFn = Callable[[Trajectory], GradeResult]
"""What a code grader's factory returns: a plain function of the run."""


@dataclass(frozen=True)
class GraderType:
    """A registered grader: its canonical name, its factory, the other spellings it answers to, and the old
    spellings it still answers to with a deprecation warning (see `graders.names`)."""

    name: str
    factory: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    reads: Reads = ()
    scopes: tuple[Scope, ...] = ("run",)
    alert: AlertDefault = "objective"
    deprecated: tuple[str, ...] = ()
    summary: str = ""  # what it promises, when that is not its factory's docstring (one factory, two owners)

    def alert_policy(self, params: Mapping[str, Any]) -> AlertPolicy:
        """The policy of a grader of this type whose config names none."""
        return self.alert(params) if callable(self.alert) else self.alert

    def parts_read(self, params: Mapping[str, Any]) -> frozenset[Part]:
        return frozenset(self.reads(params) if callable(self.reads) else self.reads)

    @property
    def plain_name(self) -> str:
        """Its plainest name: the first without a system prefix or capitals, else its canonical name."""
        return next((n for n in (self.name, *self.aliases) if "." not in n and n.islower()), self.name)

    @property
    def doc(self) -> str:
        return self.summary or inspect.getdoc(self.factory) or ""

    @property
    def parameters(self) -> list[str]:
        return [p for p in inspect.signature(self.factory).parameters if not p.startswith("_")]


GRADER_TYPES: Registry[GraderType] = Registry(
    "grader type", shown=lambda _key, entry: entry.plain_name, same=lambda a, b: a.factory is b.factory
)
"""Every grader type by each name it answers to (canonical and aliases)."""


def grader(
    name: str,
    *aliases: str,
    reads: Reads = (),
    scopes: tuple[Scope, ...] = ("run",),
    alert: AlertDefault = "objective",
    deprecated: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a grader factory under `name`, its `aliases` and its `deprecated` old spellings.

    `reads` names the parts of a run it needs (`output`, `tool_arguments`, ...): on a run whose trace lacks
    one, the grade is `skipped` ("content not captured"), never a verdict on something the trace did not carry.
    `scopes` says what it can grade: whole runs, and/or one call at a time (`tool_call`, `llm_call`), given as
    a view of the run holding just that call (see `graders.scope`). `alert` is the policy its graders page by
    unless their config says otherwise: `any` for a guardrail, whose every failure needs a person.
    """

    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        entry = GraderType(name, factory, aliases, reads, scopes, alert, deprecated)
        GRADER_TYPES.add(name, entry, *aliases, *deprecated)
        return factory

    return register


def grader_type(name: str) -> GraderType:
    """The type registered under `name`; an unknown one is a `ConfigError` listing every type as the README
    writes them: plain names first (`tools_not_called`), then the reference systems' own (`letta.contains`)."""
    return GRADER_TYPES.get(name)


def list_graders(scope: Scope | None = None) -> list[str]:
    """Canonical names of every registered grader type (that grades in `scope`, when given)."""
    return sorted({entry.name for entry in GRADER_TYPES.values() if scope is None or scope in entry.scopes})


@dataclass(frozen=True)
class JudgeGrader:
    """A judge bound to the client that sends it: sampled and limited per configured grader `name`."""

    name: str
    judgement: Judgement
    client: JudgeClient

    def __call__(self, trajectory: Trajectory, /) -> Verdict:
        return self.client.judge(self.name, self.judgement, trajectory)


def build_grader(
    type_name: str,
    params: Mapping[str, Any],
    *,
    name: str | None = None,
    judges: JudgeClient = DISABLED,
) -> Grader:
    """A ready grader from its type and parameters; bad parameters raise `ConfigError` naming the key.

    `name` is what a judge is sampled and limited under (default: the type). Factories that build other
    graders (combinators) declare `_judges` and get the judge client passed on.
    """
    entry = grader_type(type_name)
    hidden = sorted(k for k in params if k.startswith("_"))
    if hidden:
        raise ConfigError(f"unknown key {hidden[0]!r} for {type_name}; it accepts: {', '.join(entry.parameters)}")
    if "_judges" in inspect.signature(entry.factory).parameters:
        params = {**params, "_judges": judges}
    try:
        made = validate_call(config=ConfigDict(arbitrary_types_allowed=True))(entry.factory)(**params)
    except ValidationError as exc:
        raise ConfigError.from_validation(exc, type_name, entry.parameters) from None
    except ConfigError:
        raise
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"{type_name}: {exc}") from None
    if isinstance(made, Judgement):
        parts = entry.parts_read(params) | made.reads()
        built: Grader = JudgeGrader(name or type_name, made, judges)
    else:
        parts, built = entry.parts_read(params), made
    return Requires(built, parts) if parts else built


@dataclass(frozen=True)
class Requires:
    """A grader that reads parts a trace may lack (content capture off): `skipped` on such a run."""

    grader: Grader
    parts: frozenset[Part]

    def __call__(self, trajectory: Trajectory, /) -> Verdict:
        missing = [p for p in PARTS if p in self.parts and p in trajectory.lacks]
        if missing:
            return not_carried(trajectory, missing)
        return self.grader(trajectory)


def not_carried(trajectory: Trajectory, parts: Sequence[str]) -> GradeResult:
    """`skipped`, saying why the trace does not carry `parts`: witnesses that disagree, spans no dialect understood,
    else content capture."""
    what = ", ".join(p.replace("_", " ") for p in parts)
    disagreeing = [d for d in trajectory.disagreements if not set(d.lacks).isdisjoint(parts)]
    if disagreeing:
        return GradeResult.skipped(
            f"the trace's witnesses disagree, so the run's {what} cannot be trusted: "
            + "; ".join(d.describe() for d in disagreeing),
            reason="inconsistent",
        )
    if trajectory.unread:
        return GradeResult.skipped(
            f"instrumentation not understood: {'; '.join(u.describe() for u in trajectory.unread)} "
            f"(the run lacks its {what})",
            reason="not_understood",
        )
    return GradeResult.skipped(f"content not captured: the trace carries no {what}", reason="content_not_captured")


def grade_safely(grader: Grader, trajectory: Trajectory) -> Verdict:
    """The grader's verdict, its regular expressions sharing one time budget; a grader that raises gives an
    `error` grade carrying the exception (a pattern out of time: the reason `regex_timeout`)."""
    try:
        with budget():
            return grader(guarded(trajectory))
    except NotCaptured as exc:
        return not_carried(trajectory, [exc.part])
    except PatternTimeout as exc:
        return GradeResult.error(str(exc), reason="regex_timeout")
    except Exception as exc:  # a grader bug must not cost the run its other grades
        return GradeResult.error(f"grader raised {type(exc).__name__}: {exc}", exception=type(exc).__name__)


def then(verdicts: Sequence[Verdict], combine: Callable[[list[GradeResult]], GradeResult]) -> Verdict:
    """`combine` applied to the results, now if every verdict is in, else when the last future resolves."""
    pending = [v for v in verdicts if isinstance(v, Future)]
    if not pending:
        return combine([v for v in verdicts if isinstance(v, GradeResult)])
    combined: Future[GradeResult] = Future()
    remaining = [len(pending)]

    def resolved(_: Future[GradeResult]) -> None:
        remaining[0] -= 1
        if remaining[0]:
            return
        try:
            combined.set_result(combine([v.result() if isinstance(v, Future) else v for v in verdicts]))
        except Exception as exc:
            combined.set_result(GradeResult.error(f"combining grades failed: {type(exc).__name__}: {exc}"))

    for future in pending:
        future.add_done_callback(resolved)
    return combined


@dataclass(frozen=True)
class Thresholded:
    """A grader whose scores are judged again at `threshold` (the `threshold:` key of any grader block)."""

    grader: Grader
    threshold: float

    def __call__(self, trajectory: Trajectory, /) -> Verdict:
        return then([grade_safely(self.grader, trajectory)], lambda results: results[0].at_threshold(self.threshold))


def at_threshold(grader: Grader, threshold: float) -> Grader:
    return Thresholded(grader, threshold)


def innermost(grader: Grader) -> Grader:
    """The grader inside the threshold and content checks `build_grader` wraps around it."""
    while isinstance(grader, Thresholded | Requires):
        grader = grader.grader
    return grader


def is_judge(grader: Grader) -> bool:
    """Whether the grader asks a model (so it is sampled, limited, and answers later)."""
    return isinstance(innermost(grader), JudgeGrader)
