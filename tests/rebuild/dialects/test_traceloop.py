"""OpenLLMetry (Traceloop), read off a real capture (`tests/fixtures/frameworks/langgraph-traceloop`): every
model and tool call its ground truth records is on a span, and the parts this dialect owns read as they were."""

from __future__ import annotations

from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture


def test_the_capture_reads_as_its_ground_truth_says() -> None:
    assert_reads_the_ground_truth(read_capture("langgraph-traceloop", "traceloop", "frameworks"), reads="tool agent")
