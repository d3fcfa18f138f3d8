"""OpenInference, read off a real capture: every model and tool call its ground truth
records is on a span, and the parts this dialect owns read as they were (`tests/fixtures/frameworks/crewai`)."""

from __future__ import annotations

import json

import pytest

from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture


def test_the_capture_reads_as_its_ground_truth_says() -> None:
    assert_reads_the_ground_truth(read_capture("crewai", "openinference", "frameworks"), reads="llm tool agent")


@pytest.mark.parametrize(
    "recorded",
    [
        {"args": [], "kwargs": {"title": "Dune"}},  # DSPy
        {"args": [], "sanitize_inputs_outputs": False, "kwargs": {"title": "Dune"}},  # smolagents' Tool.__call__
        {"input": {"title": "Dune"}, "options": None},  # BeeAI's tool runs
    ],
)
def test_a_tool_s_arguments_recorded_in_its_framework_s_call_envelope_are_the_arguments(recorded: dict) -> None:
    from otelgrade.rebuild.dialects.openinference import tool
    from tests.rebuild.genai_spans import span

    recorded_as = {"input__value": json.dumps(recorded)}
    execution = span("2", "1", "search", 1, 2, openinference__span__kind="TOOL", tool__name="search", **recorded_as)
    assert tool(execution).arguments == {"title": "Dune"}
