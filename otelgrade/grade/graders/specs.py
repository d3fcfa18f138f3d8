"""Grader blocks as written in a config, read into `GraderSpec`s: otelgrade's own shape
(`{name, type, scope, where, ...params}`) and each reference system's, whose module registers a reader for it.

`native_shape(system)` registers a reader of one grader block; `native_file(system)` a reader of a whole
config file of that system (a vally spec, an evaldeck test case, ...), which returns otelgrade suites.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.registry import Registry
from otelgrade.core.results import Scope
from otelgrade.core.settings import SampleRates
from otelgrade.grade.graders.base import (
    ALERT_POLICIES,
    AlertPolicy,
    Grader,
    at_threshold,
    build_grader,
    grader_type,
    list_graders,
)
from otelgrade.grade.graders.names import note_spelling
from otelgrade.grade.graders.paths import config_folder, current_folder
from otelgrade.grade.graders.scope import Scoped, check_scope
from otelgrade.grade.judges import DISABLED, JudgeClient
from otelgrade.grade.judges.sampling import SuiteSample


@dataclass
class GraderSpec:
    """One grader as configured: the type to build, the name it reports under, its parameters and threshold,
    and what it grades: the whole run, or each tool or model call (`scope`) that `where` picks."""

    type: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    threshold: float | None = None
    scope: Scope = "run"
    where: dict[str, Any] = field(default_factory=dict)
    sample: SampleRates | None = None  # the suite's `sample`, for its judges that set none of their own
    base_dir: Path | None = field(default_factory=current_folder)  # relative file paths start here (`paths`)
    version: str = ""  # a hash of the effective config (`graders.versions`), set once the config is read
    alert: AlertPolicy | None = None  # as configured; None: the grader type's default (`alert_policy`)

    def __post_init__(self) -> None:
        if self.alert is not None and self.alert not in ALERT_POLICIES:
            raise ConfigError(
                f"alert must be `any` (page on any failure: a guardrail), `objective` (page when the pass rate burns "
                f"its objective's budget) or `none`, not {self.alert!r}",
                "alert",
            )
        t = self.threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, int | float) or not 0.0 <= t <= 1.0):
            raise ConfigError(f"threshold must be a number between 0 and 1, not {t!r}", "threshold")
        check_scope(self.type, self.scope, self.where)

    @property
    def alert_policy(self) -> AlertPolicy:
        """How this grader's failures page: as configured, else by its type (guardrails `any`, the rest
        `objective`)."""
        return self.alert or grader_type(self.type).alert_policy(self.params)

    def build(self, judges: JudgeClient = DISABLED) -> Grader:
        """The grader of one run. A scoped grader is built with `scoped`: one nested in another grader (all_of,
        not, ...) grades what its parent grades, so it cannot have a scope of its own."""
        if self.scope != "run":
            raise ConfigError(
                f"`scope: {self.scope}` belongs on a suite's own grader block: a grader inside all_of, any_of, not "
                "or threshold grades what the outer grader grades; list this grader directly in the suite",
                "scope",
            )
        return self._grader(judges)

    def scoped(self, judges: JudgeClient = DISABLED) -> Scoped:
        """The grader with its scope: what the grading loop calls, once per run or once per matching call."""
        return Scoped(self._grader(judges), self.scope, check_scope(self.type, self.scope, self.where), self.where)

    def _grader(self, judges: JudgeClient) -> Grader:
        if self.sample is not None:
            judges = SuiteSample(judges, self.sample)
        with config_folder(self.base_dir):
            built = build_grader(self.type, self.params, name=self.name, judges=judges)
        return built if self.threshold is None else at_threshold(built, self.threshold)


NativeShape = Callable[[Mapping[str, Any], str | None], "list[GraderSpec] | None"]
NativeFile = Callable[[Mapping[str, Any]], "list[dict[str, Any]] | None"]
NATIVE_SHAPES: Registry[NativeShape] = Registry("grader block shape", key="system", known="systems")
"""Per reference system, the reader of one of its grader blocks."""
NATIVE_FILES: Registry[NativeFile] = Registry("config file shape", key="system", known="systems")
"""Per reference system, the reader of a whole config file of its own."""


def native_shape(system: str) -> Callable[[NativeShape], NativeShape]:
    """Register a reader for one reference system's grader block.

    The reader gets the block and its key in the enclosing mapping (letta-evals names graders by key),
    and returns the specs it describes, or None when the block is not in its shape.
    """

    return NATIVE_SHAPES.register(system)


def native_file(system: str) -> Callable[[NativeFile], NativeFile]:
    """Register a reader for a whole config file of one reference system: it returns otelgrade suites
    (`[{name, graders}]`), or None when the file is not in that system's shape."""

    return NATIVE_FILES.register(system)


def native_suites(doc: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The suites a reference system's whole file describes, or None for otelgrade's own shape."""
    for reader in NATIVE_FILES.values():
        suites = reader(doc)
        if suites is not None:
            return suites
    return None


_OWN_KEYS = {"name", "type", "threshold", "config", "params", "scope", "where", "alert"}


def grader_specs(
    block: Any, key: str | None = None, system: str | None = None, base_dir: Path | None = None
) -> list[GraderSpec]:
    """Read one grader block (otelgrade's shape or a reference system's) and check that it builds.

    Relative file paths in parameters start from `base_dir`, the config file's folder (by default the folder
    of the grader being built, for the blocks nested in it).
    """
    if not isinstance(block, Mapping):
        raise ConfigError("a grader must be a mapping such as {name: ..., type: ..., <parameters>}")
    with config_folder(base_dir or current_folder()):
        specs: list[GraderSpec] | None = None
        for reader in NATIVE_SHAPES.values() if system is None else [NATIVE_SHAPES.get(system)]:
            specs = reader(block, key)
            if specs is not None:
                break
        if specs is None:
            specs = [_own_spec(block, key)]
        for spec in specs:
            spec.scoped()  # fail at load time, not on the first run
    return specs


def _own_spec(block: Mapping[str, Any], key: str | None) -> GraderSpec:
    if "type" not in block:
        raise ConfigError("a grader needs a `type`, one of: " + ", ".join(list_graders()), "type")
    type_name = grader_type(str(block["type"])).name
    note_spelling(str(block["type"]))
    params = {k: v for k, v in block.items() if k not in _OWN_KEYS}
    for nested in ("config", "params"):
        if isinstance(block.get(nested), Mapping):
            params.update(block[nested])
    name = str(block.get("name") or key or block["type"])
    return GraderSpec(
        type=type_name,
        name=name,
        params=params,
        threshold=block.get("threshold"),
        scope=block.get("scope", "run"),
        where={} if block.get("where") is None else block["where"],
        alert=block.get("alert"),
    )
