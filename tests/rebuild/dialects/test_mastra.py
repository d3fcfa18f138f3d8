"""Mastra's spans, read off a real capture: every model and tool call its ground truth
records is on a span, and the parts this dialect owns read as they were (`tests/fixtures/frameworks/mastra`)."""

from __future__ import annotations

from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture


def test_the_capture_reads_as_its_ground_truth_says() -> None:
    assert_reads_the_ground_truth(read_capture("mastra", "mastra", "frameworks"), reads="agent")
