"""Tool results that say the call failed, in the shapes providers and protocols use: an MCP `CallToolResult`
with `isError: true`, an Anthropic `tool_result` with `is_error: true`, a Gemini `functionResponse` whose response
is `{"error": ...}`. (Text such as `Error: ...` is a failure only where the model is told so: `failed_results`.)"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from otelgrade.rebuild.messages import Message, loads

# How a failure is told to the model in text: `Error: ...`, `Error executing tool ...`, `An error occurred ...`, an
# exception's qualified name (`ValueError: ...`, `KeyError('x')`) or a traceback.
_TOLD_FAILED = re.compile(
    r"\s*(?:(?i:(?:an\s+)?(?:error|exception)\b)|[\w.]*(?:Error|Exception)\s*[:(]|(?i:traceback \(most recent call))"
)
# Keys beside `error` in a response that is only an error report (a code, a message, a kind): any other key means
# the tool returned data that merely has an `error` field.
_ERROR_REPORT = frozenset({"error", "code", "message", "details", "type", "status", "error_type", "errorType"})


def says_failed(result: Any) -> bool:
    """The tool result (JSON text, or the parsed value) is a structured failure report."""
    if isinstance(result, str):
        if result.lstrip()[:1] != "{" or "rror" not in result:  # `error`, `isError`, `is_error`: before parsing
            return False
        result = loads(result)
    if not isinstance(result, dict):
        return False
    if result.get("isError") is True or result.get("is_error") is True:
        return True
    response = result.get("response")  # a functionResponse `{name, response}` as recorded whole
    if isinstance(response, dict) and "name" in result and set(result) <= {"name", "response", "id"}:
        result = response
    return bool(result.get("error")) and set(result) <= _ERROR_REPORT


def failed_results(conversations: Iterable[list[Message]]) -> set[str]:
    """The call ids whose tool message tells the model the call failed, in any of `conversations` (each model
    request's messages; a history sent again is read once per call id): marked so (`error: true`, from an
    `is_error` block), a failure report (`says_failed`), or text that opens by saying so, as tool loops and
    frameworks write a failure for the model (`Error: ...`, `Error executing tool ...`, `An error occurred ...`,
    an exception's name or traceback)."""
    told: dict[str, Message] = {}
    for messages in conversations:
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id"):
                told.setdefault(str(m["tool_call_id"]), m)
    return {
        call_id
        for call_id, m in told.items()
        if m.get("error") is True
        or _TOLD_FAILED.match(str(m.get("content") or "")[:40]) is not None
        or says_failed(m.get("content"))
    }
