"""Every dialect is one record: a name runs carry as their `source`, an order to be asked in, and a reader."""

from __future__ import annotations

from otelgrade.rebuild.dialects import DIALECTS, classify
from tests.rebuild.genai_spans import span


def test_dialects_have_distinct_names_and_generic_genai_is_asked_last() -> None:
    names = [d.name for d in DIALECTS]
    assert len(names) == len(set(names))
    assert sorted(DIALECTS, key=lambda d: d.priority)[-1].name == "genai"


def test_a_span_no_dialect_reads_is_not_classified() -> None:
    assert classify(span("1", None, "GET /orders", 0, 1, http__route="/orders")) is None


def test_the_first_dialect_that_reads_a_span_classifies_it() -> None:
    classified = classify(
        span(
            "1", None, "execute_tool search", 0, 1, gen_ai__operation__name="execute_tool", gen_ai__tool__name="search"
        )
    )
    assert classified is not None and classified.dialect == "genai"
