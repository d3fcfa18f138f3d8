"""otelgrade: grade AI agent runs from their OpenTelemetry traces."""

from typing import Any


def __getattr__(name: str) -> Any:  # lazy, so that importing a submodule does not load every grader
    if name == "custom_grader":
        from otelgrade.graders.custom import custom_grader

        return custom_grader
    raise AttributeError(f"module 'otelgrade' has no attribute {name!r}")
