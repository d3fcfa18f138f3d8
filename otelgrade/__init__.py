"""otelgrade: grade AI agent runs from their OpenTelemetry traces.

The public API is re-exported here lazily, so that importing one submodule (the receivers, say)
does not load every grader.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Trajectory": "otelgrade.core.trajectory",
    "LLMCall": "otelgrade.core.trajectory",
    "ToolCall": "otelgrade.core.trajectory",
    "GradeResult": "otelgrade.core.results",
    "grader": "otelgrade.grade.graders",
    "build_grader": "otelgrade.grade.graders",
    "list_graders": "otelgrade.grade.graders",
    "custom_grader": "otelgrade.grade.graders.custom",
    "load_config": "otelgrade.config",
    "Grading": "otelgrade.grade.grading",
    "Suite": "otelgrade.grade.grading",
    "Grade": "otelgrade.core.results",
    "rebuild": "otelgrade.rebuild",
    "read_inputs": "otelgrade.tools.offline",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'otelgrade' has no attribute {name!r}")
