"""Multi-turn conversations written with the OpenTelemetry SDK: each turn its own trace, as a service makes them
(GenAI conventions: an agent span, its model calls re-sending the history, its tool executions)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import Tracer

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def turn(
    tracer: Tracer,
    history: list[dict[str, Any]],
    user: str,
    answer: str,
    tools: Sequence[str] = (),
    ids: dict[str, Any] | None = None,
    on_agent: dict[str, Any] | None = None,
) -> int:
    """One turn: the user's message, a model call per tool (each tool executed), the answer. `ids` go on the model
    call spans (where GenAI instrumentations put `gen_ai.conversation.id`), `on_agent` on the agent span.
    `history` (the conversation's messages so far) grows by this turn's. Returns the turn's trace id."""
    history.append(text("user", user))
    with tracer.start_as_current_span("invoke_agent support", attributes={**AGENT, **(on_agent or {})}) as root:
        for number, name in enumerate(tools, 1):
            call = {"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{number}", "name": name}]}
            _chat(tracer, history, [call], ids)
            history.append(call)
            with tracer.start_as_current_span(
                f"execute_tool {name}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": f"c{number}",
                    "gen_ai.tool.call.result": "done",
                },
            ):
                pass
            history.append(
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{number}", "response": "done"}]}
            )
        _chat(tracer, history, [text("assistant", answer)], ids)
        history.append(text("assistant", answer))
        return int(root.get_span_context().trace_id)


def _chat(
    tracer: Tracer, history: list[dict[str, Any]], output: list[dict[str, Any]], ids: dict[str, Any] | None
) -> None:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps(output),
        **(ids or {}),
    }
    with tracer.start_as_current_span("chat gpt-4o-mini", attributes=attributes):
        pass
