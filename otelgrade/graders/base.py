"""Grade results, the grader registry, and the hook that reads each reference system's config shape.

A grader type is a factory registered by name: it takes the grader's typed parameters and
returns a callable that grades one `Trajectory`. Code graders return a `GradeResult`; judge
graders (`judge=True`) return an awaitable of one.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, validate_call

from otelgrade.errors import ConfigError
from otelgrade.trajectory import Trajectory

Outcome = Literal["pass", "fail", "error", "skipped"]


class GradeResult(BaseModel):
    """What one grader said about one run. `error` and `skipped` are never counted as failures."""

    model_config = ConfigDict(frozen=True)

    score: float | None
    passed: bool
    outcome: Outcome
    rationale: str = ""
    metadata: dict[str, Any] = {}

    @classmethod
    def check(cls, passed: bool, rationale: str = "", score: float | None = None, **metadata: Any) -> GradeResult:
        """A pass/fail verdict; the score defaults to 1.0 or 0.0."""
        if score is None:
            score = 1.0 if passed else 0.0
        return cls(
            score=score, passed=passed, outcome="pass" if passed else "fail", rationale=rationale, metadata=metadata
        )

    @classmethod
    def scored(cls, score: float, threshold: float, rationale: str = "", **metadata: Any) -> GradeResult:
        """A continuous score that passes at `threshold` or above."""
        return cls.check(score >= threshold, rationale, score, **metadata)

    @classmethod
    def error(cls, rationale: str, **metadata: Any) -> GradeResult:
        return cls(score=None, passed=False, outcome="error", rationale=rationale, metadata=metadata)

    @classmethod
    def skipped(cls, rationale: str, **metadata: Any) -> GradeResult:
        return cls(score=None, passed=False, outcome="skipped", rationale=rationale, metadata=metadata)


GradeFn = Callable[[Trajectory], GradeResult]
JudgeFn = Callable[[Trajectory], Awaitable[GradeResult]]


@dataclass(frozen=True)
class GraderType:
    """A registered grader: its canonical name, the factory, and what kind of work it does."""

    name: str
    factory: Callable[..., Any]
    judge: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.factory) or ""


_REGISTRY: dict[str, GraderType] = {}


def grader(name: str, *aliases: str, judge: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a grader factory under `name` and its `aliases` (each reference system's spelling)."""

    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        entry = GraderType(name, factory, judge, aliases)
        for key in (name, *aliases):
            if key in _REGISTRY and _REGISTRY[key].factory is not factory:
                raise RuntimeError(f"grader name {key!r} is registered twice")
            _REGISTRY[key] = entry
        return factory

    return register


def grader_type(name: str) -> GraderType:
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown grader type {name!r}; known types: {', '.join(list_graders())}", "type") from None


def list_graders() -> list[str]:
    """Canonical names of every registered grader type."""
    _load_builtins()
    return sorted({entry.name for entry in _REGISTRY.values()})


def build_grader(type_name: str, params: Mapping[str, Any]) -> Any:
    """Build a grader callable from its type and parameters; bad parameters raise `ConfigError`."""
    entry = grader_type(type_name)
    try:
        return validate_call(entry.factory)(**params)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        if first["type"] == "unexpected_keyword_argument":
            accepted = [p for p in inspect.signature(entry.factory).parameters if not p.startswith("_")]
            raise ConfigError(f"{type_name} has no parameter {loc!r}; it accepts: {', '.join(accepted)}", loc) from None
        if first["type"] == "missing_argument":
            raise ConfigError(f"{type_name} needs parameter {loc!r}", loc) from None
        raise ConfigError(f"{first['msg']} (got {first.get('input')!r})", loc) from None
    except ConfigError:
        raise
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"{type_name}: {exc}") from None


# --- reference systems' config shapes --------------------------------------------------------


@dataclass
class GraderSpec:
    """One grader as configured: the type to build, the name it reports under, and its parameters."""

    type: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    threshold: float | None = None


NativeShape = Callable[[Mapping[str, Any], str | None], "list[GraderSpec] | None"]
_NATIVE_SHAPES: dict[str, NativeShape] = {}


def native_shape(system: str) -> Callable[[NativeShape], NativeShape]:
    """Register a reader for one reference system's grader block.

    The reader gets the block and its key in the enclosing mapping (letta-evals names graders by
    key), and returns the specs it describes, or None when the block is not in its shape.
    """

    def register(reader: NativeShape) -> NativeShape:
        _NATIVE_SHAPES[system] = reader
        return reader

    return register


def native_shapes() -> dict[str, NativeShape]:
    _load_builtins()
    return dict(_NATIVE_SHAPES)


def _load_builtins() -> None:
    import otelgrade.graders  # noqa: F401  (importing the package registers the built-in graders)
