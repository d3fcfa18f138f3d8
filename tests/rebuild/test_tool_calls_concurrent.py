"""Agents working side by side in one request, content off: an execution no request names belongs to a model call
of its own agent's loop, not to the concurrent agent's call that happened to start just before it."""

from __future__ import annotations

from otelgrade.core.spans import Span
from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import agent, chat, span, tool

ASKED = '["tool_calls"]'


def _loop(prefix: str, name: str, start: int, tool_at: int, tool_name: str) -> list[Span]:
    """An agent's loop with no content on the trace: a call that asks for a tool, the tool, the closing call."""
    return [
        agent(prefix, "1", name, start, tool_at + 4),
        chat(f"{prefix}1", prefix, start, start + 1, [], gen_ai__response__finish_reasons=ASKED),
        tool(f"{prefix}2", prefix, tool_name, tool_at, tool_at + 1, f"call_{prefix}", "done"),
        chat(f"{prefix}3", prefix, tool_at + 2, tool_at + 3, []),
    ]


def test_interleaved_executions_of_concurrent_agents_stay_at_their_own_agents_steps() -> None:
    spans = [
        span("1", None, "invoke_workflow panel", 0, 20, gen_ai__operation__name="invoke_workflow"),
        *_loop("a", "coverage", 1, 4, "lookup_policy"),  # its tool runs after the other agent's first call began
        *_loop("b", "payout", 2, 9, "file_claim"),
    ]
    (request,) = [r for r in rebuild_trace(spans) if r.parent_span_id is None]
    assert [(c.name, c.agent) for c in request.tool_calls] == [("lookup_policy", "coverage"), ("file_claim", "payout")]
    assert request.handoffs == []
