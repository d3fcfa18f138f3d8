"""Grader blocks as written: otelgrade's own shape, a reference system's, and errors that name the key."""

from __future__ import annotations

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.grade.graders.specs import grader_specs
from tests.trajectories import run


def test_an_own_block_reads_name_type_and_parameters() -> None:
    (spec,) = grader_specs({"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]})
    assert (spec.name, spec.type, spec.params) == ("safe", "tools_not_called", {"tools": ["delete_account"]})


def test_a_vally_block_loads_as_written_and_grades_with_its_semantics() -> None:
    (spec,) = grader_specs({"type": "tool-calls", "config": {"disallowed": ["delete_account"]}})
    assert spec.type.startswith("vally.")
    assert spec.build()(run("delete_account")).outcome == "fail"  # type: ignore[union-attr]


def test_a_bad_parameter_names_its_key() -> None:
    with pytest.raises(ConfigError) as caught:
        grader_specs({"name": "short", "type": "max_tool_calls", "max": "ten"})
    assert "max" in str(caught.value)


def test_a_block_that_is_not_a_mapping_says_what_one_looks_like() -> None:
    with pytest.raises(ConfigError, match="a grader must be a mapping"):
        grader_specs(["tools_not_called"])
