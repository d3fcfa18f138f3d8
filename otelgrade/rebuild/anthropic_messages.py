"""Anthropic Messages API conversations (what instrumentations record as the request) as OpenAI-style messages.

A message's `content` is a string or a list of blocks: `text`, `tool_use` (`id`, `name`, `input`: the
model's tool call) and `tool_result` (`tool_use_id`, `content` as a string or text blocks, `is_error`: the
answer to one call, sent in a user message; a failed one becomes a tool message marked `"error": true`). The
system prompt is the request's separate `system` field.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.span_readers import text


def from_anthropic(messages: list[Any], system: Any = None) -> list[msg.Message]:
    """The conversation, with `system` (a string or text blocks) first when there is one."""
    out: list[msg.Message] = []
    instructions = content_text(system)
    if instructions:
        out.append(msg.message("system", instructions))
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        role = text(raw.get("role")) or "user"
        content = raw.get("content")
        if not isinstance(content, list):
            out.append(msg.message(role, content_text(content) or None))
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[msg.Message] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                calls.append(msg.tool_call(block.get("id"), block.get("name"), block.get("input")))
            elif kind == "tool_result":
                answer = content_text(block.get("content")) or None
                failed = True if block.get("is_error") is True else None  # None: left out of the message
                results.append(msg.message("tool", answer, tool_call_id=text(block.get("tool_use_id")), error=failed))
        out.extend(msg.with_results(role, texts, calls, results))
    return out
