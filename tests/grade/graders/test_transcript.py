"""The plain-text rendering of a run that trajectory judges read."""

from __future__ import annotations

from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders.transcript import render_trajectory


def test_messages_render_in_order_with_tool_calls_and_results() -> None:
    trajectory = Trajectory(
        trace_id="a" * 32,
        span_id="b" * 16,
        input="Book a table",
        output="Booked for 8pm.",
        steps=2,
        messages=[
            {"role": "system", "content": "You are a booking agent."},
            {"role": "user", "content": "Book a table"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "function": {"name": "book", "arguments": '{"time": "20:00"}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "confirmed"},
            {"role": "assistant", "content": "Booked for 8pm."},
        ],
    )

    text = render_trajectory(trajectory)

    lines = text.splitlines()
    assert lines[1:5] == [
        "User: Book a table",
        'Tool call: book({"time": "20:00"})',
        "Tool result (book): confirmed",
        "Assistant: Booked for 8pm.",
    ]
    assert "booking agent" not in text  # the agent's own system prompt is not its work
    assert lines[-1].startswith("Outcome: ok; 2 step(s)")


def test_tool_calls_render_when_there_are_no_messages_and_long_text_is_cut() -> None:
    trajectory = Trajectory(
        trace_id="a" * 32,
        span_id="b" * 16,
        status="error",
        error="quota exceeded",
        tool_calls=[ToolCall(name="fetch", arguments={"url": "x"}, result="y" * 10_000, error=True)],
    )

    text = render_trajectory(trajectory, part_chars=200)

    assert 'Tool call: fetch({"url":"x"})' in text
    assert "Tool error (fetch): yyy" in text and "chars cut" in text and len(text) < 1000
    assert "Final answer: (none)" in text and "Outcome: error: quota exceeded" in text
