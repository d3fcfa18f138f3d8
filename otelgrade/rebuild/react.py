"""Tool calls asked for in text: the ReAct protocol (`Thought: ... / Action: <tool> / Action Input: <arguments>`),
which LangChain's and LlamaIndex's ReAct agents have the model write instead of a tool call, the framework
running the tool and sending its result back as `Observation: <result>` in the next request.

A call asked this way has no id on the trace; it gets one from its tool and arguments, the same wherever the
message is seen again (a later request's history, where the framework may rewrite the arguments' JSON as a Python
dict), so the observation that follows it answers it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from typing import Any

from otelgrade.rebuild.messages import Message, parse_json_maybe

_ACTION = re.compile(r"^Action:\s*([^\n]+?)\s*\nAction Input:\s*(.+?)\s*$", re.MULTILINE | re.DOTALL)
_OBSERVATION = "Observation:"


def action(text: object) -> tuple[str, str, Any] | None:
    """(call id, tool, arguments) of the action a model's text asks for, if it is written in ReAct's form."""
    if not isinstance(text, str) or "Action Input:" not in text:
        return None
    found = _ACTION.search(text)
    if found is None:
        return None
    name, arguments = found.group(1).strip(), _arguments(found.group(2).strip())
    said = json.dumps(arguments, sort_keys=True, default=str)  # a history may rewrite JSON as a Python dict
    digest = hashlib.blake2s(f"{name}\n{said}".encode(), digest_size=6).hexdigest()
    return f"react-{digest}", name, arguments


def with_observations(messages: list[Message]) -> list[Message]:
    """The messages with each `Observation:` user message that follows a message asking for an action as the tool
    result it is (answering that action's call id); the same list where there is none."""
    out = None
    for i in range(1, len(messages)):
        content = messages[i].get("content")
        if messages[i].get("role") != "user" or not isinstance(content, str) or not content.startswith(_OBSERVATION):
            continue
        found = action(messages[i - 1].get("content")) if messages[i - 1].get("role") == "assistant" else None
        if found is not None:
            out = out if out is not None else list(messages)
            out[i] = {"role": "tool", "content": content[len(_OBSERVATION) :].strip(), "tool_call_id": found[0]}
    return out if out is not None else messages


def _arguments(raw: str) -> Any:
    parsed = parse_json_maybe(raw)
    if isinstance(parsed, dict):
        return parsed
    try:
        value = ast.literal_eval(raw)  # a Python dict written by the model (`{'meter_id': 'M-1'}`)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw
    return value if isinstance(value, dict) else raw
