"""One agent run as a readable transcript, for judge prompts (`{trajectory}`).

Long texts are cut in the middle so a judge sees the start and end of each message and of the run.
"""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.trajectory import Trajectory, content_text

PART_CHARS = 2000
TOTAL_CHARS = 24000


def render_trajectory(trajectory: Trajectory, part_chars: int = PART_CHARS, total_chars: int = TOTAL_CHARS) -> str:
    """The run as numbered lines: the request, each message or tool call in order, the outcome."""
    lines = [f"Request: {_cut(trajectory.input or '(none)', part_chars)}"]
    if trajectory.messages:
        lines.extend(_message_lines(trajectory.messages, part_chars))
    else:
        for call in trajectory.tool_calls:
            lines.append(f"Tool call: {call.name}({_cut(_compact(call.arguments), part_chars)})")
            marker = "Tool error" if call.error else "Tool result"
            lines.append(f"{marker} ({call.name}): {_cut(call.result if call.result is not None else '', part_chars)}")
    lines.append(f"Final answer: {_cut(trajectory.output, part_chars) if trajectory.output else '(none)'}")
    status = "ok" if trajectory.status == "ok" else f"error: {trajectory.error or 'unknown'}"
    lines.append(
        f"Outcome: {status}; {trajectory.steps} step(s), {len(trajectory.llm_calls)} model call(s), "
        f"{len(trajectory.tool_calls)} tool call(s)"
    )
    return _cut("\n".join(lines), total_chars)


def _message_lines(messages: list[dict[str, Any]], part_chars: int) -> list[str]:
    lines: list[str] = []
    call_names: dict[str, str] = {}  # tool_call_id -> tool name, to label results
    for message in messages:
        role = str(message.get("role") or "unknown")
        if role == "system":
            continue  # the agent's own instructions: long, and not the agent's work
        text = content_text(message.get("content"))
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            name = message.get("name") or call_names.get(call_id) or call_id or "tool"
            lines.append(f"Tool result ({name}): {_cut(text, part_chars)}")
            continue
        if text:
            lines.append(f"{role.capitalize()}: {_cut(text, part_chars)}")
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            function = call.get("function") or {}
            name = function.get("name") or "?"
            call_names[str(call.get("id") or "")] = name
            lines.append(f"Tool call: {name}({_cut(_compact(function.get('arguments')), part_chars)})")
    return lines


def _compact(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = max(1, (limit - 20) // 2)
    return f"{text[:half]} …[{len(text) - 2 * half} chars cut]… {text[-half:]}"
