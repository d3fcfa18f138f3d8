"""Grading functions of the user's own, loaded from a file the config names."""

from __future__ import annotations

from pathlib import Path

import pytest

from otelgrade.core.errors import ConfigError
from otelgrade.grade.graders.custom import as_score, resolve
from otelgrade.grade.graders.paths import config_folder


def test_a_function_in_a_file_beside_the_config_is_found_by_module_and_name(tmp_path: Path) -> None:
    (tmp_path / "my_graders.py").write_text(
        "import otelgrade\n\n"
        "@otelgrade.custom_grader(name='mentions_refund_test_custom')\n"
        "def mentions_refund(sample, submission):\n"
        "    return ('refund' in submission, 'looked for refund')\n"
    )
    with config_folder(tmp_path):
        name, fn = resolve("my_graders.py:mentions_refund_test_custom")
    assert name == "mentions_refund_test_custom"
    assert as_score(fn(None, "a refund is on its way")) == (1.0, "looked for refund", {})


def test_an_unknown_function_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"is not registered; decorate it with @otelgrade\.custom_grader"):
        resolve("no_such_function_anywhere")


def test_a_module_that_fails_to_import_names_the_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('oops')\n")
    with config_folder(tmp_path), pytest.raises(ConfigError, match="RuntimeError: oops"):
        resolve("broken.py:anything")


@pytest.mark.parametrize(
    ("returned", "read"),
    [(True, (1.0, "", {})), (0.25, (0.25, "", {})), ({"score": 1, "rationale": "ok"}, (1.0, "ok", {}))],
)
def test_what_a_function_returns_reads_as_a_score(returned: object, read: tuple[object, ...]) -> None:
    assert as_score(returned) == read


def test_anything_else_says_what_to_return() -> None:
    with pytest.raises(TypeError, match=r"return a score, \(score, rationale\) or dict"):
        as_score("great")
