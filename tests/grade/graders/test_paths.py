"""A relative path in a grader block starts from the folder of the config file that names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.grade.graders.paths import config_file, config_folder, files_read


def test_a_relative_path_starts_from_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "rubric.txt").write_text("Was it helpful?")
    with config_folder(tmp_path), files_read() as read:
        found = config_file("rubric.txt", "prompt_path")
    assert found == tmp_path / "rubric.txt"
    assert read == [found]  # what the grader's version covers


def test_a_missing_file_names_the_absolute_path_and_the_rule(tmp_path: Path) -> None:
    with config_folder(tmp_path), pytest.raises(ConfigError) as caught:
        config_file("nope.txt", "prompt_path")
    assert caught.value.path == "prompt_path"
    assert str(tmp_path / "nope.txt") in caught.value.message
    assert "relative path starts from the folder" in caught.value.message
