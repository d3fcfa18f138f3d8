"""A run whose spans form a chain thousands deep (tool spans under tool spans, agents under agents, model calls
under model calls) is rebuilt whole, in time linear in its depth (the timing is in bench/deep_trees.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.deep_trees import SHAPES, Shape, deep_trace
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


def test_deep_chains_do_not_hold_the_grading_thread() -> None:
    """Every shape at depth 10,000 within 20 s in all, in a process of its own: about 0.4 s here; walking each
    span's subtree, as the rebuild once did, took 33.9 s for the tool chain alone."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.deep_trees", "--repeat", "1"], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("rebuilt in") == len(SHAPES)
