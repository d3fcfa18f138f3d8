"""Load and validate `otelgrade.yaml` (or a reference system's own config file) into a `Config`.

Errors name the file, the key path and what would be valid. Grader blocks may be written in
otelgrade's shape (`{name, type, ...params}`) or in the shape of letta-evals, evaldeck, Potato
or vally; each system's module registers a reader for its shape (`graders.native_shape`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from otelgrade.errors import ConfigError
from otelgrade.graders import GraderSpec, build_grader, grader_type, list_graders, native_shapes
from otelgrade.judging import JudgeSettings

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: Any) -> float:
    """`2s`, `150ms`, `10m`, `1h`, `1d` or a number of seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string such as '2s', '500ms', '10m'")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a duration; write e.g. '2s', '500ms', '10m', '1d' or a number of seconds")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Receivers(_Strict):
    grpc: str | None = "0.0.0.0:4317"
    http: str | None = "0.0.0.0:4318"
    max_request_bytes: int = Field(20 * 1024 * 1024, gt=0)  # as the OpenTelemetry Collector


class MetricsEndpoint(_Strict):
    endpoint: str | None = "0.0.0.0:9464"
    label_limit: int = Field(200, gt=0)


class Assembly(_Strict):
    settle: float = 2.0
    idle_timeout: float = 30.0
    max_trace_duration: float = 600.0
    max_traces: int = Field(50_000, gt=0)
    max_spans_per_trace: int = Field(10_000, gt=0)
    decision_cache_size: int = Field(100_000, gt=0)

    @field_validator("settle", "idle_timeout", "max_trace_duration", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> float:
        return parse_duration(v)


class Sink(_Strict):
    type: Literal["jsonl", "otlp"]
    path: str | None = None  # jsonl
    max_bytes: int = Field(100 * 1024 * 1024, gt=0)  # jsonl rotation size
    backups: int = Field(5, ge=0)
    endpoint: str | None = None  # otlp: host:port (gRPC) or http(s)://.../v1/traces
    insecure: bool = True


class Suite(BaseModel):
    """A named set of graders applied to every run whose attributes `match`."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str
    match: dict[str, Any] = Field(default_factory=dict)
    graders: list[GraderSpec] = Field(default_factory=list)


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    receivers: Receivers = Field(default_factory=Receivers)
    metrics: MetricsEndpoint = Field(default_factory=MetricsEndpoint)
    assembly: Assembly = Field(default_factory=Assembly)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    suites: list[Suite] = Field(default_factory=list)
    sinks: list[Sink] = Field(default_factory=list)
    source: str = "<embedded default>"


# --- loading ----------------------------------------------------------------------------------

DEFAULT_CONFIG = "otelgrade.yaml"


def default_config_text() -> str:
    return resources.files("otelgrade").joinpath("defaults", DEFAULT_CONFIG).read_text()


def load_config(path: str | Path | None = None) -> Config:
    """Read a config file (or the embedded default) and validate every grader in it."""
    if path is None:
        return parse_config(yaml.safe_load(default_config_text()), "<embedded default>")
    file = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror}", file=file) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", file=file) from None
    try:
        return parse_config(doc, file)
    except ConfigError as exc:
        raise exc.at("", file) from None


def parse_config(doc: Any, source: str = "<string>") -> Config:
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise ConfigError(f"the top level must be a mapping, not {type(doc).__name__}")
    doc = dict(doc)
    whole_file = _native_file(doc)
    if whole_file is not None:
        doc = whole_file
    raw_suites = doc.pop("suites", []) or []
    if not isinstance(raw_suites, list):
        raise ConfigError("must be a list of suites", "suites")
    base_dir = Path(source).parent if Path(source).is_file() else None
    suites = [_parse_suite(s, f"suites[{i}]", base_dir) for i, s in enumerate(raw_suites)]
    names = [s.name for s in suites]
    for name in {n for n in names if names.count(n) > 1}:
        raise ConfigError(f"suite name {name!r} is used twice; suite names label metrics and must be unique", "suites")
    try:
        config = Config(**doc, suites=suites, source=source)
    except ValidationError as exc:
        raise _pydantic_error(exc) from None
    for i, sink in enumerate(config.sinks):
        if sink.type == "jsonl" and not sink.path:
            raise ConfigError("a jsonl sink needs `path`", f"sinks[{i}].path")
        if sink.type == "otlp" and not sink.endpoint:
            raise ConfigError("an otlp sink needs `endpoint` (e.g. localhost:4317)", f"sinks[{i}].endpoint")
    return config


def _parse_suite(raw: Any, where: str, base_dir: Path | None = None) -> Suite:
    if not isinstance(raw, Mapping):
        raise ConfigError("a suite must be a mapping with `name`, `match` and `graders`", where)
    raw = dict(raw)
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ConfigError("every suite needs a `name` (it labels the metrics)", f"{where}.name")
    match = raw.get("match") or {}
    if not isinstance(match, Mapping):
        raise ConfigError("`match` must map attribute names to values or regexes", f"{where}.match")
    for key, value in match.items():
        for pattern in value if isinstance(value, list) else [value]:
            if isinstance(pattern, str) and pattern.startswith("^"):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ConfigError(f"invalid regex {pattern!r}: {exc}", f"{where}.match.{key}") from None
    graders = raw.get("graders") or []
    items = list(graders.items()) if isinstance(graders, Mapping) else [(None, g) for g in graders]
    specs: list[GraderSpec] = []
    for i, (key, block) in enumerate(items):
        at = f"{where}.graders.{key}" if key is not None else f"{where}.graders[{i}]"
        try:
            specs.extend(grader_specs(block, key, base_dir=base_dir))
        except ConfigError as exc:
            raise exc.at(at) from None
    names = [s.name for s in specs]
    for name in {n for n in names if names.count(n) > 1}:
        raise ConfigError(
            f"grader name {name!r} is used twice in this suite; give each a distinct `name`", f"{where}.graders"
        )
    extra = set(raw) - {"name", "match", "graders"}
    if extra:
        raise ConfigError(f"unknown suite key(s) {sorted(extra)}; a suite has name, match, graders", where)
    return Suite(name=raw["name"], match=dict(match), graders=specs)


_GRADER_KEYS = {"name", "type", "threshold", "config", "params"}


def grader_specs(
    block: Any, key: str | None = None, system: str | None = None, base_dir: Path | None = None
) -> list[GraderSpec]:
    """Read one grader block (otelgrade's shape or a reference system's) and check it builds.

    Relative file paths in parameters (`prompt_path`) are resolved against `base_dir`, the config file's folder.
    """
    if not isinstance(block, Mapping):
        raise ConfigError("a grader must be a mapping such as {name: ..., type: ..., <parameters>}")
    specs: list[GraderSpec] | None = None
    readers = native_shapes()
    for _system, reader in readers.items() if system is None else [(system, readers[system])]:
        specs = reader(block, key)
        if specs is not None:
            break
    if specs is None:
        specs = [_otelgrade_spec(block, key)]
    for spec in specs:
        prompt_path = spec.params.get("prompt_path")
        if base_dir is not None and isinstance(prompt_path, str) and not Path(prompt_path).is_absolute():
            spec.params["prompt_path"] = str(base_dir / prompt_path)
        build_grader(spec.type, spec.params)  # fail at load time, not on the first run
    return specs


def _otelgrade_spec(block: Mapping[str, Any], key: str | None) -> GraderSpec:
    if "type" not in block:
        raise ConfigError("a grader needs a `type`, one of: " + ", ".join(list_graders()), "type")
    type_name = grader_type(str(block["type"])).name
    params = {k: v for k, v in block.items() if k not in _GRADER_KEYS}
    for nested in ("config", "params"):
        if isinstance(block.get(nested), Mapping):
            params.update(block[nested])
    threshold = block.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
        raise ConfigError(f"threshold must be a number between 0 and 1, not {threshold!r}", "threshold")
    return GraderSpec(
        type=type_name, name=str(block.get("name") or key or block["type"]), params=params, threshold=threshold
    )


def _native_file(doc: dict[str, Any]) -> dict[str, Any] | None:
    """A reference system's whole config file, read as one suite (None for otelgrade's own shape)."""
    if "suites" in doc or any(k in doc for k in ("receivers", "assembly", "sinks")):
        return None
    name = str(doc.get("name") or "default")
    if "stimuli" in doc:  # vally eval spec: one suite per stimulus, so grader names stay unique per suite
        stimuli = [s for s in doc["stimuli"] or [] if isinstance(s, Mapping)]
        return {
            "suites": [
                {"name": str(s.get("name") or f"{name}-{i}"), "graders": s.get("graders") or []}
                for i, s in enumerate(stimuli)
            ]
        }
    if "expected" in doc or isinstance(doc.get("turns"), list):  # evaldeck test case: one combined grader
        case = {k: doc[k] for k in ("expected", "graders", "turns") if k in doc}
        return {"suites": [{"name": name, "graders": [{"name": "expected", **case}]}]}
    if "evaluators" in doc:  # Potato experiment
        return {"suites": [{"name": name, "graders": doc["evaluators"]}]}
    if isinstance(doc.get("graders"), Mapping):  # letta-evals suite
        return {"suites": [{"name": name, "graders": doc["graders"]}]}
    return None


def _pydantic_error(exc: ValidationError) -> ConfigError:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        return ConfigError(f"unknown key {first['loc'][-1]!r}", loc)
    return ConfigError(f"{first['msg']} (got {first.get('input')!r})", loc)
