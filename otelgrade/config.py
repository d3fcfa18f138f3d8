"""Load `otelgrade.yaml` (or a reference system's own config file) into a validated `Config`.

The file level only: YAML, the top-level blocks (each validated by its step's settings model), suites and
whole native files. Grader blocks are read by `graders.specs`, sink entries by `sinks`, receiver addresses
by the registered receivers. Errors name the file, the key path and what would be valid.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from otelgrade.errors import ConfigError
from otelgrade.graders import GraderSpec, grader_specs, native_suites
from otelgrade.receivers import receiver_types
from otelgrade.settings import AssemblySettings, JudgeSettings, MetricsSettings, ReceiverSettings
from otelgrade.sinks import SinkSettings, read_sink

DEFAULT_CONFIG = "otelgrade.yaml"
EMBEDDED = "<embedded default>"


@dataclass
class Suite:
    """A named set of graders applied to every run whose attributes `match`."""

    name: str
    match: dict[str, Any] = field(default_factory=dict)
    graders: list[GraderSpec] = field(default_factory=list)


@dataclass
class Config:
    receivers: ReceiverSettings = field(default_factory=ReceiverSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    assembly: AssemblySettings = field(default_factory=AssemblySettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    suites: list[Suite] = field(default_factory=list)
    sinks: list[SinkSettings] = field(default_factory=list)
    source: str = EMBEDDED

    def receiver_addresses(self) -> dict[str, str]:
        """The receivers to start: name -> address (a receiver set to null is off)."""
        given = self.receivers.model_extra or {}
        addresses = {name: given.get(name, rt.default_address) for name, rt in receiver_types().items()}
        return {name: address for name, address in addresses.items() if address}


_BLOCKS: dict[str, type[BaseModel]] = {
    "receivers": ReceiverSettings,
    "metrics": MetricsSettings,
    "assembly": AssemblySettings,
    "judge": JudgeSettings,
}
_TOP_LEVEL = (*_BLOCKS, "suites", "sinks")


def default_config_text() -> str:
    return resources.files("otelgrade").joinpath("defaults", DEFAULT_CONFIG).read_text()


def load_config(path: str | Path | None = None) -> Config:
    """Read a config file (or the embedded default) and validate every grader in it."""
    if path is None:
        return parse_config(yaml.safe_load(default_config_text()), EMBEDDED)
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
    if not any(key in doc for key in _TOP_LEVEL):
        doc = {"suites": native_suites(doc) or []} if native_suites(doc) is not None else doc
    unknown = sorted(set(doc) - set(_TOP_LEVEL))
    if unknown:
        raise ConfigError(f"unknown top-level key {unknown[0]!r}; the top level has {', '.join(_TOP_LEVEL)}")
    base_dir = Path(source).parent if Path(source).is_file() else None
    settings = {key: _block(model, doc.get(key), key) for key, model in _BLOCKS.items()}
    _check_receivers(settings["receivers"])
    raw_suites = doc.get("suites") or []
    if not isinstance(raw_suites, list):
        raise ConfigError("must be a list of suites", "suites")
    suites = [_parse_suite(s, f"suites[{i}]", base_dir) for i, s in enumerate(raw_suites)]
    names = [s.name for s in suites]
    for name in sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(f"suite name {name!r} is used twice; suite names label metrics and must be unique", "suites")
    raw_sinks = doc.get("sinks") or []
    if not isinstance(raw_sinks, list):
        raise ConfigError("must be a list of sinks such as [{type: jsonl, path: grades.jsonl}]", "sinks")
    sinks = []
    for i, raw in enumerate(raw_sinks):
        try:
            sink = read_sink(raw)
        except ConfigError as exc:
            raise exc.at(f"sinks[{i}]") from None
        sinks.append(sink.resolve_paths(base_dir) if base_dir is not None else sink)
    return Config(suites=suites, sinks=sinks, source=source, **settings)


def _block(model: type[BaseModel], raw: Any, key: str) -> Any:
    if raw is None:
        return model()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"must be a mapping of {key} settings", key)
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfigError.from_validation(exc, key, model.model_fields).at(key) from None


def _check_receivers(receivers: ReceiverSettings) -> None:
    known = receiver_types()
    for name, address in (receivers.model_extra or {}).items():
        if name not in known:
            choices = ", ".join([*known, *ReceiverSettings.model_fields])
            raise ConfigError(f"unknown receiver {name!r}; receivers has {choices}", f"receivers.{name}")
        if address is not None and (not isinstance(address, str) or ":" not in address):
            raise ConfigError(f"must be host:port (or null to turn it off), not {address!r}", f"receivers.{name}")


def _parse_suite(raw: Any, where: str, base_dir: Path | None = None) -> Suite:
    if not isinstance(raw, Mapping):
        raise ConfigError("a suite must be a mapping with `name`, `match` and `graders`", where)
    extra = set(raw) - {"name", "match", "graders"}
    if extra:
        raise ConfigError(f"unknown suite key(s) {sorted(extra)}; a suite has name, match, graders", where)
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
    for name in sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(
            f"grader name {name!r} is used twice in this suite; give each a distinct `name`", f"{where}.graders"
        )
    return Suite(name=raw["name"], match=dict(match), graders=specs)
