"""An agent called as a tool whose runner's invocation span holds nothing (its work ran beside it, the context
not carried into it): one agent ran inside the call, so the call is that agent called as a tool, not a delegation
to two agents at once."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.rebuild import rebuild
from tests.rebuild.genai_spans import agent, chat, span, tool


def _answer(content: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": content}]}])


def _asks(name: str, call_id: str, arguments: dict[str, Any]) -> str:
    call = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return json.dumps([{"role": "assistant", "parts": [call]}])


def test_an_empty_invocation_beside_the_agent_that_did_the_work_is_no_second_agent_in_the_call() -> None:
    asked = [{"role": "user", "content": "How are my claims doing?"}]
    said = _answer("C-1 is under review.")
    spans = [
        agent("1", None, "desk", 0, 30),
        chat("2", "1", 1, 2, asked, gen_ai__output__messages=_asks("ask_history", "c1", {"input": "Claims C-1?"})),
        tool("3", "1", "ask_history", 3, 20, "c1", "C-1 is under review."),
        agent("4", "3", "Runner.run", 4, 5, gen_ai__input__messages=json.dumps(asked), gen_ai__output__messages=said),
        span("5", "3", "workflow", 5, 19),
        agent("6", "5", "historian", 6, 18),
        chat("7", "6", 7, 8, [{"role": "user", "content": "Claims C-1?"}], gen_ai__output__messages=_answer("Review.")),
        chat("8", "1", 21, 22, asked, gen_ai__output__messages=_answer("C-1 is under review.")),
    ]
    request = next(r for r in rebuild(spans) if r.parent_span_id is None)
    assert request.handoffs == []
    assert [(c.name, c.result) for c in request.tool_calls] == [("ask_history", "C-1 is under review.")]
    assert request.output == "C-1 is under review."
