"""AutoGen's own span shapes, read off a real capture: every model and tool call its ground truth
records is on a span, and the parts this dialect owns read as they were (`tests/fixtures/frameworks/autogen`)."""

from __future__ import annotations

from tests.rebuild.dialects.captured import assert_reads_the_ground_truth, read_capture


def test_the_capture_reads_as_its_ground_truth_says() -> None:
    assert_reads_the_ground_truth(
        read_capture("autogen", "autogen", "frameworks"), reads="agent", model_call_spans=False
    )  # its model calls come as log events
