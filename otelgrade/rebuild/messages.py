"""Format-independent message helpers: JSON values, OpenAI-style messages, reading conversations.

Each dialect converts its own message format with these (OpenAI chat messages are shared by
several). Every function here is total: malformed input gives fewer messages, never an exception.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

import orjson

from otelgrade.core.trajectory import REDACTED, content_text
from otelgrade.rebuild.span_readers import text

Message = dict[str, Any]
# 19 digits in a row may be an integer beyond 64 bits. Found by mapping every byte to "0" (ASCII digits) or " "
# and looking for the run: several times faster than a regular expression over long message texts.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
# `json.dumps(value, ensure_ascii=False)` builds an encoder per call; one built once writes the same text.
_DUMPS = json.JSONEncoder(ensure_ascii=False).encode


# --- JSON helpers -------------------------------------------------------------------------


def loads(value: Any) -> Any:
    """A JSON string parsed, a structured value as is, None when it is not JSON. orjson parses it, unless it may
    hold an integer too long for 64 bits (orjson would make it a float); what orjson refuses and Python's parser
    accepts (NaN, lone surrogates) is parsed as before."""
    if isinstance(value, str):
        if _LONG_RUN not in value.encode("utf-8", "surrogatepass").translate(_DIGITS_ONLY):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def parse_json_maybe(value: Any) -> Any:
    """Tool arguments: an object/array when the text is JSON for one, None for a redaction placeholder, else the
    text unchanged."""
    if isinstance(value, str) and value in REDACTED:
        return None
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        parsed = loads(value)
        return value if parsed is None else parsed
    return value


def result_text(value: Any) -> str | None:
    """A tool result as text: a JSON-encoded string is unwrapped once, structures become JSON; a redaction
    placeholder is no result."""
    if value is None or (isinstance(value, str) and value in REDACTED):
        return None
    if isinstance(value, str):
        if value[:1] == '"':
            parsed = loads(value)
            if isinstance(parsed, str):
                return parsed
        return value
    try:
        return _DUMPS(value)
    except (TypeError, ValueError):
        return str(value)


def tool_value(result: str | None) -> str | None:
    """A tool's own result out of the envelopes frameworks record it in (each unwrapped in turn): LangChain's
    serialized ToolMessage (`{"lc": 1, ..., "kwargs": {"content": ...}}`) or its message dict (`{"type": "tool",
    "data": {"content": ...}}`) or its `str()` (`content='...' name=...`), a callback's record of the output
    beside its arguments (`{"output": ..., "kwargs": ...}`), ADK's function response for a tool that returned
    no object (`{"result": ...}`)."""
    value: Any = result
    for _ in range(4):
        if isinstance(value, str) and value.startswith("content="):
            inner = _message_str_content(value)
        elif isinstance(value, str):
            enveloped = value.startswith("{") and any(key in value for key in _ENVELOPE_KEYS)
            doc = loads(value) if enveloped else None
            inner = _enveloped(doc) if isinstance(doc, dict) else _NOTHING
        else:
            inner = _enveloped(value) if isinstance(value, dict) else _NOTHING
        if inner is _NOTHING:
            break
        value = inner
    return result if value is result else result_text(value)


_NOTHING = object()
_ENVELOPE_KEYS = ('"lc"', '"data"', '"output"', '"result"')  # a JSON result without one is no envelope
_MESSAGE_STR = re.compile(r"content=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\") (?:name|tool_call_id)=")


def _enveloped(doc: dict[str, Any]) -> Any:
    kwargs, data = doc.get("kwargs"), doc.get("data")
    if doc.get("lc") == 1 and isinstance(kwargs, dict) and "content" in kwargs:
        return kwargs["content"]
    if doc.get("type") == "tool" and isinstance(data, dict) and "content" in data:
        return data["content"]
    if "output" in doc and set(doc) <= {"output", "kwargs", "args", "inputs"}:
        return doc["output"]
    if set(doc) == {"result"}:
        return doc["result"]
    return _NOTHING


def _message_str_content(text_value: str) -> Any:
    """The content of a LangChain message's `str()` (`content='...' name='...' tool_call_id='...'`)."""
    match = _MESSAGE_STR.match(text_value)
    if match is None:
        return _NOTHING
    try:
        return ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return _NOTHING


def python_literal(value: str) -> Any:
    """A Python repr of plain values (`str()` of a list of dicts, as some callbacks write them), or None:
    `ast.literal_eval`, so no code runs."""
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def dumps_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return _DUMPS(arguments if arguments is not None else {})
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
        "id": text(call_id),
        "type": "function",
        "function": {"name": str(name) if name is not None else "", "arguments": dumps_arguments(arguments)},
    }


_ROLES = {"model": "assistant"}  # Gemini's name for the assistant's turns


def message(role: str, content: str | None, tool_calls: list[dict[str, Any]] | None = None, **extra: Any) -> Message:
    out: Message = {"role": _ROLES.get(role, role), "content": content}
    if tool_calls:
        out["tool_calls"] = tool_calls
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def openai_tool_calls(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tool_calls` of an OpenAI-style message, normalised (a flat call may hold its arguments as `args`, as
    LangChain's tool calls do)."""
    calls = []
    for call in raw.get("tool_calls") or ():
        if isinstance(call, dict):
            fn = function_of(call)
            arguments = fn["arguments"] if "arguments" in fn else fn.get("args")
            calls.append(tool_call(call.get("id"), fn.get("name"), arguments))
    return calls


def with_results(role: str, texts: list[str], calls: list[dict[str, Any]], results: list[Message]) -> list[Message]:
    """A message of `texts` and `calls`, then the tool results it carried as `tool` messages.

    The message itself is left out when it carried nothing but tool results.
    """
    head = [message(role, content_text(texts) or None, calls)] if texts or calls or not results else []
    return [*head, *results]


# --- OpenAI chat messages -----------------------------------------------------------------


def from_openai(messages: Iterable[Any]) -> list[Message]:
    """OpenAI chat-completions messages (content string or parts, tool_calls with string args)."""
    out = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        role = str(raw.get("role") or "assistant")
        calls = openai_tool_calls(raw)
        extra: dict[str, Any] = {}
        if raw.get("tool_call_id") or (role == "tool" and raw.get("id")):
            extra["tool_call_id"] = str(raw.get("tool_call_id") or raw.get("id"))
        if role == "tool" and isinstance(raw.get("name"), str):
            extra["name"] = raw["name"]
        out.append(message(role, content_text(raw.get("content")) or None, calls, **extra))
    return out


# --- reading conversations ----------------------------------------------------------------


def last_user_text(messages: list[Message]) -> str | None:
    """The text of the last user message that has any (tool results are `tool` messages, not `user`)."""
    found = None
    for m in messages:
        if m.get("role") == "user" and m.get("content"):
            found = m["content"]
    return found


def assistant_text(messages: list[Message]) -> str | None:
    """The assistant messages' text, one message per line (messages, unlike parts, are joined by line)."""
    texts = [m["content"] for m in messages if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
    return "\n".join(t for t in texts if t) or None


def tool_results(messages: list[Message]) -> dict[str, str]:
    """Tool results by call id, as the tool messages of a model request show them."""
    out: dict[str, str] = {}
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") and isinstance(m.get("content"), str):
            out.setdefault(str(m["tool_call_id"]), m["content"])
    return out
