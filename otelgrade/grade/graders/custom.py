"""Custom grading functions for letta-evals tool graders, written by users.

Decorate a function `(sample, submission) -> score` with `@custom_grader` in a module, and name it
in a letta grader: `{kind: tool, function: my_check, module: my_graders.py}` (or
`function: "my_graders.py:my_check"`, or a dotted module `pkg.checks:my_check`). The function may
return a `GradeResult`, a number, a `(score, rationale)` pair, or a mapping with `score`,
`rationale` and `metadata`. The built-in letta functions live in the same registry.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, overload

from otelgrade.core.errors import ConfigError
from otelgrade.core.registry import Registry
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.paths import config_file


@dataclass(frozen=True)
class Sample:
    """What a grading function sees of the run besides the submission (letta's `Sample`)."""

    input: str | None
    ground_truth: str | None
    trajectory: Trajectory
    metadata: dict[str, Any] = field(default_factory=dict)


GradingFunction = Callable[[Sample, str], Any]


def _reloaded(held: GradingFunction, new: GradingFunction) -> bool:
    """A user's module loaded again (from another copy of the file) redefines its own functions; it never
    takes the name of a built-in one."""
    return not held.__module__.startswith("otelgrade.") and held.__qualname__ == new.__qualname__


GRADING_FUNCTIONS: Registry[GradingFunction] = Registry("grading function", key="function", same=_reloaded)
"""The letta grading functions by name: the built-in ones and every `@custom_grader`."""


@overload
def custom_grader(fn: GradingFunction, /) -> GradingFunction: ...
@overload
def custom_grader(*, name: str | None = None) -> Callable[[GradingFunction], GradingFunction]: ...


def custom_grader(fn: GradingFunction | None = None, /, *, name: str | None = None) -> Any:
    """Register a grading function under its own name (or `name`): `@custom_grader` or `@custom_grader(name=...)`."""

    def register(func: GradingFunction) -> GradingFunction:
        return GRADING_FUNCTIONS.add(name or func.__name__, func)

    return register(fn) if fn is not None else register


def load_module(module: str, key: str = "module") -> None:
    """Import a module of grading functions: a path to a `.py` file (a relative one starts from the config
    file's folder) or a dotted module name. `key` is the config key that names it, for errors."""
    try:
        if module.endswith(".py") or "/" in module:
            path = config_file(module, key).resolve()
            name = f"otelgrade_custom_{abs(hash(str(path)))}"
            if name in sys.modules:
                return
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ConfigError(f"cannot import {str(path)!r} as a Python module", key)
            loaded = importlib.util.module_from_spec(spec)
            sys.modules[name] = loaded
            try:
                spec.loader.exec_module(loaded)
            except BaseException:
                del sys.modules[name]
                raise
        else:
            importlib.import_module(module)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"cannot import {module!r}: {type(exc).__name__}: {exc}", key) from None


def resolve(function: str, module: str | None = None) -> tuple[str, GradingFunction]:
    """The registered function named `function` (`module:name` imports the module first)."""
    key = "module"
    if ":" in function and module is None:
        module, function = function.rsplit(":", 1)
        key = "function"
    if module:
        load_module(module, key)
    if function not in GRADING_FUNCTIONS:
        raise ConfigError(
            f"grading function {function!r} is not registered; decorate it with @otelgrade.custom_grader and "
            f"name its module with `module:` (known: {', '.join(GRADING_FUNCTIONS.names())})",
            "function",
        )
    return function, GRADING_FUNCTIONS.get(function)


def as_score(value: Any) -> tuple[float, str, dict[str, Any]]:
    """A grading function's return value as (score, rationale, metadata)."""
    if isinstance(value, bool):
        return float(value), "", {}
    if isinstance(value, int | float):
        return float(value), "", {}
    if isinstance(value, tuple) and len(value) == 2:
        return float(value[0]), str(value[1]), {}
    if isinstance(value, Mapping):
        return float(value["score"]), str(value.get("rationale", "")), dict(value.get("metadata") or {})
    score = getattr(value, "score", None)
    if isinstance(score, int | float):
        return float(score), str(getattr(value, "rationale", "") or ""), dict(getattr(value, "metadata", {}) or {})
    raise TypeError(f"a grading function returned {type(value).__name__}; return a score, (score, rationale) or dict")
