"""Built-in graders. Every module in this package registers its graders when imported."""

import importlib
import pkgutil

from otelgrade.graders.base import (
    GradeResult,
    GraderSpec,
    GraderType,
    build_grader,
    grader,
    grader_type,
    list_graders,
    native_shape,
    native_shapes,
)

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "GradeResult",
    "GraderSpec",
    "GraderType",
    "build_grader",
    "grader",
    "grader_type",
    "list_graders",
    "native_shape",
    "native_shapes",
]
