"""otelgrade: grade AI agent runs from their OpenTelemetry traces.

The public API is re-exported here lazily, so that importing one submodule (the receivers, say)
does not load every grader.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Trajectory": "otelgrade.trajectory",
    "LLMCall": "otelgrade.trajectory",
    "ToolCall": "otelgrade.trajectory",
    "GradeResult": "otelgrade.results",
    "grader": "otelgrade.graders",
    "build_grader": "otelgrade.graders",
    "list_graders": "otelgrade.graders",
    "custom_grader": "otelgrade.graders.custom",
    "load_config": "otelgrade.config",
    "Grading": "otelgrade.grading",
    "Suite": "otelgrade.grading",
    "Grade": "otelgrade.results",
    "rebuild": "otelgrade.rebuild",
    "read_inputs": "otelgrade.offline",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'otelgrade' has no attribute {name!r}")
