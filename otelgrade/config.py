"""Load `otelgrade.yaml` (or a reference system's own config file) into a validated `Config`.

The file level only: YAML, the top-level blocks (each validated by its step's settings model), suites and
whole native files. Grader blocks are read by `graders.specs`, sink entries by `sinks`, receiver addresses
by the registered receivers. Errors name the file, the key path and what would be valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from rapidfuzz import process
from rapidfuzz.distance import OSA

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import Pattern, PatternError, configured
from otelgrade.core.settings import (
    BASE_DIR,
    AssemblySettings,
    ConversationSettings,
    DurabilitySettings,
    JudgeSettings,
    LimitsSettings,
    MetricsSettings,
    RebuildSettings,
    ReceiverSettings,
    SampleRates,
    ServerSettings,
    UiSettings,
)
from otelgrade.export.sinks import SinkSettings, read_sink
from otelgrade.grade.graders import GraderSpec, grader_specs, native_suites
from otelgrade.grade.graders.multiturn import CONVERSATION_ONLY
from otelgrade.grade.graders.versions import grader_version
from otelgrade.grade.grading import Suite
from otelgrade.grade.route import FIELDS
from otelgrade.intake.receivers import receiver_types

DEFAULT_CONFIG = "otelgrade.yaml"
EMBEDDED = "<embedded default>"


@dataclass
class Config:
    receivers: ReceiverSettings = field(default_factory=ReceiverSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    assembly: AssemblySettings = field(default_factory=AssemblySettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    ui: UiSettings = field(default_factory=UiSettings)
    rebuild: RebuildSettings = field(default_factory=RebuildSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    durability: DurabilitySettings = field(default_factory=DurabilitySettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    conversations: ConversationSettings = field(default_factory=ConversationSettings)
    suites: list[Suite] = field(default_factory=list)
    sinks: list[SinkSettings] = field(default_factory=list)
    source: str = EMBEDDED
    suites_listed: bool = False  # the file has a top-level `suites:` list: `suites: []` grades nothing on purpose

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
    "ui": UiSettings,
    "rebuild": RebuildSettings,
    "limits": LimitsSettings,
    "durability": DurabilitySettings,
    "server": ServerSettings,
    "conversations": ConversationSettings,
}
_TOP_LEVEL = (*_BLOCKS, "suites", "sinks")
# What a suite's `match` commonly names: the run fields and common resource and GenAI span attributes.
_WELL_KNOWN_KEYS = (
    *FIELDS,
    "service.namespace",
    "service.version",
    "service.instance.id",
    "deployment.environment",
    "deployment.environment.name",
    "gen_ai.agent.id",
    "gen_ai.system",
    "gen_ai.provider.name",
    "gen_ai.operation.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "gen_ai.conversation.id",
)


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
        doc = _load_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(_yaml_problem(exc), file=file) from None
    except ConfigError as exc:
        raise exc.at("", file) from None
    try:
        return parse_config(doc, file)
    except ConfigError as exc:
        raise exc.at("", file) from None


MAX_ALIAS_NODES = 10_000
"""How many nodes YAML aliases (`*name`) may add to a config file, in all, once each is written out."""
_ALIAS_COUNT_CAP = 1000 * MAX_ALIAS_NODES


def _load_yaml(text: str) -> Any:
    """`yaml.safe_load`, refusing a document whose aliases write out more than `MAX_ALIAS_NODES` nodes, before
    anything is built from it (a few hundred bytes of nested aliases can stand for billions of nodes)."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_aliases(root: yaml.Node) -> None:
    sizes: dict[int, int] = {}  # a node's size with its aliases written out, by id (aliases share the node)
    started: set[int] = set()

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in started:
            raise ConfigError(
                f"a YAML alias at line {node.start_mark.line + 1} refers to a block that contains it (an endless "
                "document); write that block out"
            )
        started.add(id(node))
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        total = 1 + sum(size(child) for child in children)
        sizes[id(node)] = min(total, _ALIAS_COUNT_CAP)  # enough to refuse, without counting to billions
        return sizes[id(node)]

    written_out = size(root)
    added = written_out - len(sizes)
    if added > MAX_ALIAS_NODES:
        shown = f"{added}" if written_out < _ALIAS_COUNT_CAP else f"over {_ALIAS_COUNT_CAP}"
        raise ConfigError(
            f"the YAML aliases (*name) in this file would write out {shown} more nodes than it has, over the "
            f"{MAX_ALIAS_NODES} allowed (aliases nested in aliases multiply); write the repeated blocks out, or "
            "alias fewer of them"
        )


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """What the YAML parser found and where (1-based line and column), without its `in "<unicode string>"`."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return f"not valid YAML: {exc}"
    mark, context = exc.problem_mark, exc.context_mark
    started = f" ({exc.context} that starts at line {context.line + 1})" if exc.context and context else ""
    tabs = "; YAML indents with spaces, not tabs" if "'\\t'" in (exc.problem or "") else ""
    return f"not valid YAML at line {mark.line + 1}, column {mark.column + 1}: {exc.problem}{started}{tabs}"


def parse_config(doc: Any, source: str = "<string>") -> Config:
    """Validate a parsed config document; every pattern it configures is checked for catastrophic backtracking."""
    with configured():
        return _parse_config(doc, source)


def _parse_config(doc: Any, source: str) -> Config:
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise ConfigError(f"the top level must be a mapping, not {type(doc).__name__}")
    doc = dict(doc)
    suites_listed = isinstance(doc.get("suites"), list)
    if not any(key in doc for key in _TOP_LEVEL):
        doc = {"suites": native_suites(doc) or []} if native_suites(doc) is not None else doc
    unknown = sorted(set(doc) - set(_TOP_LEVEL))
    if unknown:
        raise ConfigError(f"unknown top-level key {unknown[0]!r}; the top level has {', '.join(_TOP_LEVEL)}")
    base_dir = Path(source).resolve().parent if Path(source).is_file() else None
    settings = {key: _block(model, doc.get(key), key, base_dir) for key, model in _BLOCKS.items()}
    _check_receivers(settings["receivers"])
    spool_dir = settings["durability"].spool_dir
    if spool_dir and base_dir is not None:
        settings["durability"] = settings["durability"].model_copy(update={"spool_dir": str(base_dir / spool_dir)})
    raw_suites = doc.get("suites") or []
    if not isinstance(raw_suites, list):
        raise ConfigError("must be a list of suites", "suites")
    suites = [_parse_suite(s, f"suites[{i}]", base_dir) for i, s in enumerate(raw_suites)]
    for suite in suites:
        for spec in suite.graders:
            spec.version = grader_version(spec, settings["judge"])
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
    return Config(suites=suites, sinks=sinks, source=source, suites_listed=suites_listed, **settings)


def _block(model: type[BaseModel], raw: Any, key: str, base_dir: Path | None) -> Any:
    if raw is None:
        return model()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"must be a mapping of {key} settings", key)
    try:
        return model.model_validate(dict(raw), context={BASE_DIR: base_dir})  # file paths are relative to it
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


def _check_match_key(key: str, where: str) -> None:
    """A key one or two typos from a well-known one (`servce.name`) is an error; other attribute names are taken
    as written."""
    if key in _WELL_KNOWN_KEYS:
        return
    typos = 1 if len(key) < 8 else 2
    found = process.extractOne(key, _WELL_KNOWN_KEYS, scorer=OSA.distance, processor=str.lower, score_cutoff=typos)
    if found is not None:
        raise ConfigError(
            f"match key {key!r} looks misspelled: did you mean `{found[0]}`? (keys are run fields such as "
            "service.name, agent_name, source, status, or attribute names exactly as the spans carry them)",
            where,
        )


def _parse_suite(raw: Any, where: str, base_dir: Path | None = None) -> Suite:
    if not isinstance(raw, Mapping):
        raise ConfigError("a suite must be a mapping with `name`, `match` and `graders`", where)
    extra = set(raw) - {"name", "match", "graders", "sample", "regrade", "level", "shadow"}
    if extra:
        raise ConfigError(
            f"unknown suite key(s) {sorted(extra)}; a suite has name, match, graders, sample, regrade, level, shadow",
            where,
        )
    level = raw.get("level", "run")
    if level not in ("run", "conversation"):
        raise ConfigError(
            f"`level` is `run` (grade each request run) or `conversation` (grade whole conversations), not {level!r}",
            f"{where}.level",
        )
    if not isinstance(raw.get("shadow", False), bool):
        raise ConfigError(
            "`shadow` is true or false: grade and record, but keep out of the shipped alerts", f"{where}.shadow"
        )
    if not isinstance(raw.get("regrade", False), bool):
        raise ConfigError("`regrade` is true or false: grade a run again when late spans reach it", f"{where}.regrade")
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ConfigError("every suite needs a `name` (it labels the metrics)", f"{where}.name")
    match = raw.get("match") or {}
    if not isinstance(match, Mapping):
        raise ConfigError("`match` must map attribute names to values or regexes", f"{where}.match")
    for key, value in match.items():
        _check_match_key(str(key), f"{where}.match.{key}")
        for pattern in value if isinstance(value, list) else [value]:
            if isinstance(pattern, str) and pattern.startswith("^"):
                try:
                    Pattern(pattern)  # inside `configured()`: also refused when it backtracks catastrophically
                except PatternError as exc:
                    raise ConfigError(f"invalid regex {pattern!r}: {exc}", f"{where}.match.{key}") from None
    graders = raw.get("graders")
    if not graders:
        raise ConfigError(
            f"suite {raw['name']!r} has no graders; add at least one, e.g. [{{type: max_tool_calls, max: 10}}]",
            f"{where}.graders",
        )
    if not isinstance(graders, list | Mapping):
        raise ConfigError("`graders` must be a list of grader blocks (or map names to blocks)", f"{where}.graders")
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
    whole = [s.type for s in specs if s.type in CONVERSATION_ONLY]
    if whole and level != "conversation":
        raise ConfigError(
            f"`{whole[0]}` grades whole conversations; add `level: conversation` to this suite (or move the grader "
            "to a suite that has it)",
            f"{where}.level",
        )
    sample = _suite_sample(raw.get("sample"), f"{where}.sample")
    for spec in specs:
        spec.sample = sample
    return Suite(
        name=raw["name"],
        match=dict(match),
        graders=specs,
        regrade=raw.get("regrade", False),
        level=level,
        shadow=raw.get("shadow", False),
    )


def _suite_sample(raw: Any, where: str) -> SampleRates | None:
    """A suite's `sample`: the share of runs its judges grade, overall or per environment."""
    if raw is None:
        return None
    try:
        return SampleRates.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError.from_validation(exc).at(where) from None
