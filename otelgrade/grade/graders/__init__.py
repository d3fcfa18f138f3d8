"""Built-in graders. Every module in this package registers its graders when imported."""

import importlib
import pkgutil

from otelgrade.core.results import GradeResult
from otelgrade.grade.graders.base import (
    Grader,
    GraderType,
    build_grader,
    grade_safely,
    grader,
    grader_type,
    list_graders,
)
from otelgrade.grade.graders.specs import GraderSpec, grader_specs, native_file, native_shape, native_suites

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "reference":  # the grader reference's writer: it registers nothing
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "GradeResult",
    "Grader",
    "GraderSpec",
    "GraderType",
    "build_grader",
    "grade_safely",
    "grader",
    "grader_specs",
    "grader_type",
    "list_graders",
    "native_file",
    "native_shape",
    "native_suites",
]
