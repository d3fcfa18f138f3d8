"""JSON Schemas in grader configs: checked at load, their regexes time-limited."""

from __future__ import annotations

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.grade.graders.schemas import schema_validator

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "pattern": "^[A-Z]"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_a_schema_validates_as_its_draft_says() -> None:
    validator = schema_validator(SCHEMA)
    assert validator.is_valid({"city": "Paris"})
    assert not validator.is_valid({"city": "paris"})
    assert not validator.is_valid({"city": "Paris", "extra": 1})
    assert not validator.is_valid({})


def test_an_invalid_schema_is_refused_at_load() -> None:
    with pytest.raises(ConfigError, match="invalid JSON Schema"):
        schema_validator({"type": "objekt"})


def test_pattern_properties_with_unevaluated_properties_is_refused_with_the_fix() -> None:
    schema = {"patternProperties": {"^x": {}}, "unevaluatedProperties": False}
    with pytest.raises(ConfigError, match="use additionalProperties instead"):
        schema_validator(schema)
