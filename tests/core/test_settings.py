"""Settings blocks: durations as people write them, unknown keys refused, the worker count from the environment."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from otelgrade.core.settings import WORKERS_ENV, AssemblySettings, ServerSettings, parse_duration


@pytest.mark.parametrize(
    ("written", "seconds"), [("2s", 2.0), ("150ms", 0.15), ("10m", 600.0), ("1d", 86400.0), (3, 3.0)]
)
def test_durations_read_as_seconds(written: object, seconds: float) -> None:
    assert parse_duration(written) == seconds


@pytest.mark.parametrize("written", ["two seconds", True, "5 parsecs"])
def test_a_duration_that_is_not_one_says_how_to_write_it(written: object) -> None:
    with pytest.raises(ValueError, match="2s"):
        parse_duration(written)


def test_a_misspelled_key_is_an_error_not_a_default() -> None:
    with pytest.raises(ValidationError, match="setle"):
        AssemblySettings.model_validate({"setle": "1s"})
    assert AssemblySettings.model_validate({"settle": "500ms"}).settle == 0.5


def test_the_worker_count_comes_from_the_environment_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert ServerSettings().worker_count() == 3
    monkeypatch.setenv(WORKERS_ENV, "lots")
    with pytest.raises(ValueError, match=WORKERS_ENV):
        ServerSettings().worker_count()
    monkeypatch.delenv(WORKERS_ENV)
    assert ServerSettings.model_validate({"workers": 2}).worker_count() == 2
