"""A grader's version: a short hash of its effective config, so a verdict says which grader gave it.

It covers what can change a verdict's meaning: the type, every parameter, the threshold, the scope and `where`,
the content of every file building the grader reads (a judge's `prompt_path`, a letta module), and for a judge the
prompt it sends (built-in criteria included) with the model and temperature it is sent with. Not the grader's name,
nor how a run is sampled. Key order and YAML layout do not matter: the parameters are hashed as sorted JSON.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from otelgrade.core.settings import JudgeSettings
from otelgrade.grade.graders.base import JudgeGrader, innermost
from otelgrade.grade.graders.paths import config_folder, files_read
from otelgrade.grade.graders.specs import GraderSpec

VERSION_CHARS = 12


def grader_version(spec: GraderSpec, judge: JudgeSettings | None = None) -> str:
    """The version of the grader `spec` builds, sent to models as `judge` (the config's `judge:` block) says."""
    with config_folder(spec.base_dir), files_read() as files:
        built = spec.scoped().grader
    doc: dict[str, Any] = {
        "type": spec.type,
        "params": spec.params,
        "threshold": spec.threshold,
        "scope": spec.scope,
        "where": spec.where,
        "files": sorted(hashlib.sha256(path.read_bytes()).hexdigest() for path in dict.fromkeys(files)),
    }
    inner = innermost(built)
    if isinstance(inner, JudgeGrader):
        judgement = inner.judgement
        asked = dataclasses.asdict(judgement) if dataclasses.is_dataclass(judgement) else repr(judgement)
        controls = getattr(judgement, "controls", None)
        settings = judge or JudgeSettings()
        doc["judge"] = {
            "asked": asked,
            "model": getattr(controls, "model", None) or settings.model,
            "temperature": _first(getattr(controls, "temperature", None), settings.temperature),
        }
    text = json.dumps(doc, sort_keys=True, default=_plain, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:VERSION_CHARS]


def _first(value: Any, default: Any) -> Any:
    return default if value is None else value


def _plain(value: Any) -> Any:
    """Values JSON has no form for, as stable text (pydantic models as sorted fields, the rest as written)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(map(str, value))
    return str(value)
