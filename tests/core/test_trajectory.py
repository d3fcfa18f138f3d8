"""The `Trajectory` graders see: its JSON names, content as text, and parts the trace does not carry."""

from __future__ import annotations

import pytest

from otelgrade.core.trajectory import Handoff, NotCaptured, ToolCall, Trajectory, content_text, guarded
from tests.trajectories import run


def test_handoffs_serialize_as_from_and_to() -> None:
    dumped = run(handoffs=[Handoff(from_agent="triage", to_agent="billing")]).model_dump(mode="json")
    assert dumped["handoffs"][0]["from"] == "triage"
    assert dumped["handoffs"][0]["to"] == "billing"
    assert Trajectory.model_validate(dumped).handoffs[0].to_agent == "billing"


def test_content_text_joins_text_parts_and_hides_redactions() -> None:
    assert content_text([{"type": "text", "text": "Booked"}, "UA123", {"type": "image_url"}]) == "Booked UA123"
    assert content_text({"type": "output_text", "text": "hi"}) == "hi"
    assert content_text("[REDACTED]") == ""
    assert content_text(None) == ""


def test_reading_a_lacking_part_raises_instead_of_answering_empty() -> None:
    seen = guarded(run("search", output=None, lacks=["output"]))
    with pytest.raises(NotCaptured) as caught:
        _ = seen.output
    assert caught.value.part == "output"
    assert [c.name for c in seen.tool_calls] == ["search"]  # what it carries reads as usual


def test_a_run_lacking_nothing_is_graded_as_it_is() -> None:
    whole = run(output="done")
    assert guarded(whole) is whole


def test_own_calls_leave_out_the_workers_calls() -> None:
    calls = [ToolCall(name="plan", agent="lead"), ToolCall(name="search", agent="worker"), ToolCall(name="x")]
    assert [c.name for c in run(agent_name="lead").own_calls(calls)] == ["plan", "x"]
