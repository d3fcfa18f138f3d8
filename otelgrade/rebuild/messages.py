"""Message formats found in spans, turned into OpenAI-style chat messages.

Covers GenAI `{role, parts}` messages, OpenAI chat messages, Vercel AI SDK prompt messages,
Bedrock-style content blocks (Strands) and the legacy GenAI events (`gen_ai.user.message`, ...).
Every function here is total: malformed input gives fewer messages, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Message = dict[str, Any]


# --- JSON helpers -------------------------------------------------------------------------


def loads(value: Any) -> Any:
    """A JSON string parsed, a structured value as is, None when it is not JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def parse_json_maybe(value: Any) -> Any:
    """Tool arguments: an object/array when the text is JSON for one, else the text unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        parsed = loads(value)
        return value if parsed is None else parsed
    return value


def result_text(value: Any) -> str | None:
    """A tool result as text: a JSON-encoded string is unwrapped once, structures become JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        if value[:1] == '"':
            parsed = loads(value)
            if isinstance(parsed, str):
                return parsed
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def dumps_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)


def as_list(value: Any) -> list[Any]:
    parsed = loads(value)
    if isinstance(parsed, list):
        return parsed
    return [parsed] if isinstance(parsed, dict) else []


# --- building blocks ----------------------------------------------------------------------


def function_of(call: dict[str, Any]) -> dict[str, Any]:
    """The `function` object of an OpenAI tool call, or the call itself when it is flat."""
    fn = call.get("function")
    return fn if isinstance(fn, dict) else call


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "id": str(call_id) if call_id not in (None, "") else None,
        "type": "function",
        "function": {"name": str(name) if name is not None else "", "arguments": dumps_arguments(arguments)},
    }


def message(role: str, content: str | None, tool_calls: list[dict[str, Any]] | None = None, **extra: Any) -> Message:
    out: Message = {"role": role, "content": content}
    if tool_calls:
        out["tool_calls"] = tool_calls
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def join_texts(texts: Iterable[str]) -> str | None:
    kept = [t for t in texts if t]
    return "\n".join(kept) if kept else None


def text_of(content: Any) -> str | None:
    """Text of a content value: a string, a list of text parts/blocks, or a dict holding text."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind in (None, "text", "output_text", "input_text") or "text" in part:
                    value = part.get("text", part.get("content"))
                    if isinstance(value, str):
                        texts.append(value)
        return join_texts(texts)
    if isinstance(content, dict):
        value = content.get("text", content.get("content"))
        return value if isinstance(value, str) else None
    return str(content)


# --- OpenAI chat messages -----------------------------------------------------------------


def from_openai(messages: Iterable[Any]) -> list[Message]:
    """OpenAI chat-completions messages (content string or parts, tool_calls with string args)."""
    out = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        role = str(raw.get("role") or "assistant")
        calls = []
        for call in raw.get("tool_calls") or ():
            if isinstance(call, dict):
                fn = function_of(call)
                calls.append(tool_call(call.get("id"), fn.get("name"), fn.get("arguments")))
        extra: dict[str, Any] = {}
        if raw.get("tool_call_id") or (role == "tool" and raw.get("id")):
            extra["tool_call_id"] = str(raw.get("tool_call_id") or raw.get("id"))
        if role == "tool" and isinstance(raw.get("name"), str):
            extra["name"] = raw["name"]
        out.append(message(role, text_of(raw.get("content")), calls, **extra))
    return out


# --- GenAI semantic-convention messages ({role, parts}) -----------------------------------


def from_genai(messages: Iterable[Any]) -> list[Message]:
    """GenAI `gen_ai.input.messages` / `gen_ai.output.messages` (parts) to OpenAI messages.

    Tool results (`tool_call_response` parts) become one `tool` message each, whatever role
    carried them (pydantic-ai puts them in a `user` message).
    """
    out: list[Message] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        if "parts" not in raw:
            out.extend(from_openai([raw]))
            continue
        role = str(raw.get("role") or "assistant")
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[Message] = []
        for part in raw.get("parts") or ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                if isinstance(part.get("content"), str):
                    texts.append(part["content"])
            elif kind == "tool_call":
                calls.append(tool_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                response = part.get("response", part.get("result"))
                results.append(
                    message(
                        "tool",
                        result_text(response),
                        tool_call_id=_str_or_none(part.get("id")),
                        name=part.get("name") if isinstance(part.get("name"), str) else None,
                    )
                )
        if texts or calls or not results:
            out.append(message(role, join_texts(texts), calls))
        out.extend(results)
    return out


def finish_reason_of(messages: Iterable[Any]) -> str | None:
    for raw in messages:
        if isinstance(raw, dict) and isinstance(raw.get("finish_reason"), str):
            return str(raw["finish_reason"])
    return None


# --- Vercel AI SDK prompt messages --------------------------------------------------------


def from_vercel(messages: Iterable[Any]) -> list[Message]:
    """Vercel AI SDK messages: content string or parts (text, tool-call, tool-result)."""
    out: list[Message] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        role = str(raw.get("role") or "assistant")
        content = raw.get("content")
        if not isinstance(content, list):
            out.append(message(role, text_of(content)))
            continue
        texts, calls, results = [], [], []
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "tool-call":
                calls.append(
                    tool_call(part.get("toolCallId"), part.get("toolName"), part.get("input", part.get("args")))
                )
            elif kind == "tool-result":
                output = part.get("output", part.get("result"))
                if isinstance(output, dict) and "value" in output:
                    output = output["value"]
                results.append(
                    message(
                        "tool",
                        result_text(output),
                        tool_call_id=_str_or_none(part.get("toolCallId")),
                        name=part.get("toolName"),
                    )
                )
        if texts or calls or not results:
            out.append(message(role, join_texts(texts), calls))
        out.extend(results)
    return out


def vercel_prompt(prompt: Any) -> list[Message]:
    """`ai.prompt` ({system, prompt | messages}) as messages."""
    doc = loads(prompt)
    if not isinstance(doc, dict):
        return []
    out: list[Message] = []
    if isinstance(doc.get("system"), str):
        out.append(message("system", doc["system"]))
    if isinstance(doc.get("prompt"), str):
        out.append(message("user", doc["prompt"]))
    elif isinstance(doc.get("messages"), list):
        out.extend(from_vercel(doc["messages"]))
    return out


# --- Bedrock-style content blocks (Strands) -----------------------------------------------


def from_blocks(role: str, blocks: Any) -> list[Message]:
    """Content blocks (`text`, `toolUse`, `toolResult`) of one message, as messages."""
    if isinstance(blocks, str):
        parsed = loads(blocks) if blocks.lstrip()[:1] in ("[", "{") else None
        if parsed is None:
            return [message(role, blocks)]
        blocks = parsed
    if isinstance(blocks, dict):
        blocks = [blocks]
    if not isinstance(blocks, list):
        return []
    texts, calls, results = [], [], []
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif isinstance(block.get("toolUse"), dict):
                use = block["toolUse"]
                calls.append(tool_call(use.get("toolUseId"), use.get("name"), use.get("input")))
            elif isinstance(block.get("toolResult"), dict):
                res = block["toolResult"]
                results.append(
                    message("tool", text_of(res.get("content")), tool_call_id=_str_or_none(res.get("toolUseId")))
                )
    out = []
    if texts or calls or not results:
        out.append(message(role, join_texts(texts), calls))
    out.extend(results)
    return out


# --- legacy GenAI events ------------------------------------------------------------------

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def from_events(events: Iterable[tuple[str, dict[str, Any]]]) -> tuple[list[Message], list[Message], str | None]:
    """Legacy GenAI message events -> (input messages, output messages, finish reason).

    Each event is (name, payload) where the payload merges the event's attributes and body.
    """
    inputs: list[Message] = []
    outputs: list[Message] = []
    finish: str | None = None
    for name, payload in events:
        role = _EVENT_ROLES.get(name)
        if role is not None:
            inputs.extend(_event_message(str(payload.get("role") or role), payload))
        elif name == "gen_ai.choice":
            body = payload.get("message")
            if isinstance(body, dict):
                outputs.extend(_event_message(str(body.get("role") or "assistant"), body))
            elif body is not None:
                outputs.extend(from_blocks("assistant", body))
            if isinstance(payload.get("finish_reason"), str):
                finish = payload["finish_reason"]
    return inputs, outputs, finish


def _event_message(role: str, payload: dict[str, Any]) -> list[Message]:
    content = payload.get("content")
    if isinstance(content, (list, dict)) or (isinstance(content, str) and _looks_like_blocks(content)):
        blocks = from_blocks(role, content)
        if blocks:
            if role == "tool" and payload.get("id") and len(blocks) == 1 and not blocks[0].get("tool_call_id"):
                blocks[0]["tool_call_id"] = str(payload["id"])
            return blocks
    calls = []
    for call in payload.get("tool_calls") or ():
        if isinstance(call, dict):
            fn = function_of(call)
            calls.append(tool_call(call.get("id"), fn.get("name"), fn.get("arguments")))
    extra: dict[str, Any] = {}
    if role == "tool":
        extra["tool_call_id"] = _str_or_none(payload.get("id") or payload.get("tool_call_id"))
        extra["name"] = payload.get("name") if isinstance(payload.get("name"), str) else None
    return [message(role, text_of(content), calls, **extra)]


def _looks_like_blocks(text: str) -> bool:
    head = text.lstrip()[:2]
    return head in ("[{", '{"') and any(key in text for key in ('"text"', '"toolUse"', '"toolResult"'))


# --- reading conversations ----------------------------------------------------------------


def last_user_text(messages: list[Message]) -> str | None:
    """The text of the last user message that has any (tool results are `tool` messages, not `user`)."""
    found = None
    for m in messages:
        if m.get("role") == "user" and m.get("content"):
            found = m["content"]
    return found


def assistant_text(messages: list[Message]) -> str | None:
    return join_texts(
        m["content"] for m in messages if m.get("role") == "assistant" and isinstance(m.get("content"), str)
    )


def _str_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
