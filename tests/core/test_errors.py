"""Errors a user reads: each says where (file, key path) and what to do."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from otelgrade.core.errors import ConfigError, closest, join_path


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max: int


def validation_error(**given: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Block(**given)
    return caught.value


def test_an_error_names_its_file_and_key_path() -> None:
    error = ConfigError("must be positive", "max").at("suites[0].graders[2]", "otelgrade.yaml")
    assert str(error) == "otelgrade.yaml: suites[0].graders[2].max: must be positive"


def test_list_indexes_attach_without_a_dot() -> None:
    assert join_path("suites", "[0]", "graders", "[2]", "", "max") == "suites[0].graders[2].max"


def test_an_unknown_key_lists_the_keys_the_block_takes() -> None:
    error = ConfigError.from_validation(validation_error(max=1, mxa=2), "grader", accepted=["max", "name"])
    assert error.path == "mxa"
    assert error.message == "unknown key 'mxa' for grader; it accepts: max, name"


def test_a_missing_key_is_named() -> None:
    error = ConfigError.from_validation(validation_error(), "max_tool_calls")
    assert (error.path, error.message) == ("max", "max_tool_calls needs `max`")


def test_a_bad_value_shows_what_was_given() -> None:
    assert "(got 'ten')" in ConfigError.from_validation(validation_error(max="ten")).message


def test_did_you_mean_offers_the_closest_names_first() -> None:
    names = ["max_tool_calls", "tools_not_called", "tool_order", "contains"]
    assert closest("max_tool_call", names)[0] == "max_tool_calls"
    assert closest("TOOLS_NOT_CALLED", names)[0] == "tools_not_called"
    assert closest("zzzz", names) == []
