"""A recorded answer that is a placeholder is no answer."""

from __future__ import annotations

import pytest

from otelgrade.rebuild.outputs import placeholder, recorded_answer


@pytest.mark.parametrize("written", ["None", "null", "undefined", "", "  "])
def test_a_null_written_out_is_no_answer(written: str) -> None:
    assert placeholder(written)
    assert recorded_answer(written) is None


def test_a_real_answer_is_kept() -> None:
    assert not placeholder("None of the flights fit; try tomorrow.")
    assert recorded_answer("Booked.") == "Booked."
