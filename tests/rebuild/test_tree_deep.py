"""A run whose spans form a chain thousands deep (tool spans under tool spans, agents under agents, model calls
under model calls), or thousands of spans flat under their agent, is rebuilt whole and graded in time linear in its
size (the timing is in bench/deep_trees.py)."""

from __future__ import annotations

import subprocess
import sys
from types import FrameType

import pytest

from bench.deep_trees import LAYOUTS, SHAPES, Layout, Shape, deep_trace, shaped_trace
from otelgrade.config import load_config
from otelgrade.pipeline import Pipeline
from otelgrade.rebuild import rebuild


@pytest.mark.parametrize("shape", SHAPES)
def test_a_chain_ten_thousand_deep_is_rebuilt_whole(shape: Shape) -> None:
    runs = rebuild(deep_trace(10_000, shape))
    (request,) = [r for r in runs if r.parent_span_id is None]
    if shape == "tool":
        assert len(request.tool_calls) == 10_000 and request.tool_calls[-1].name == "step_10001"
    elif shape == "agent":  # agents that only wrap agents are not runs; the last is an empty placeholder
        assert [r.agent_name for r in runs] == ["agent_10000"]
    else:
        assert len(request.llm_calls) == 1  # wrappers of one model call: the innermost counts


def _calls_to_grade(size: int, shape: Shape, layout: Layout) -> int:
    """How many Python and built-in function calls (generator steps included) the live path makes to rebuild and
    grade one run of `size` spans: a count, so the same on a busy machine as on a quiet one."""
    pipeline = Pipeline(load_config(None), sinks=[])
    spans = shaped_trace(size, shape, layout)
    count = 0

    def counted(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(counted)
    try:
        pipeline.grade_trace(spans)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", ["tool", "llm"])
def test_grading_a_run_takes_work_linear_in_its_spans(shape: Shape, layout: Layout) -> None:
    """Three times the spans, about three times the calls (at most 4x): asking, for each of a run's tool calls,
    whether any of its calls shows the model's request made it 8.4x here (14.5 s for 10,000 flat tool spans)."""
    small, large = _calls_to_grade(1_000, shape, layout), _calls_to_grade(3_000, shape, layout)
    assert large / small < 4.0, f"{small:,} calls for 1,000 spans, {large:,} for 3,000"


def test_deep_trees_do_not_hold_the_grading_thread() -> None:
    """Every shape and layout of 10,000 spans graded within 30 s in all, in a process of its own: about 3 s here;
    walking each span's subtree, as the rebuild once did, took 33.9 s for the tool chain alone."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.deep_trees", "--sizes", "10000", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" s |") == len(SHAPES) * len(LAYOUTS)
