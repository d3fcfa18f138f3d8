"""Small readers of span attributes and events (and of attribute values), shared by the dialects."""

from __future__ import annotations

import contextlib
import json
import re
from functools import cache
from typing import Any

from otelgrade.core.spans import STATUS_ERROR, Event, Span
from otelgrade.core.trajectory import REDACTED


def first(attrs: dict[str, Any], *keys: str) -> Any:
    """The first of `keys` that is present and not empty."""
    for key in keys:
        value = attrs.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def has_any(attrs: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Whether any of `keys` is present (no generator: called for every span)."""
    return not attrs.keys().isdisjoint(keys)


def text(value: Any) -> str | None:
    """A value as text; None, "" and a redaction placeholder are no text."""
    if value is None or value == "" or (isinstance(value, str) and value in REDACTED):
        return None
    return value if isinstance(value, str) else str(value)


def integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return None
    return None


# The GenAI convention's array, and the single value older instrumentations (Semantic Kernel) write.
FINISH_REASON_KEYS = ("gen_ai.response.finish_reasons", "gen_ai.response.finish_reason")


def finish_reason(value: Any) -> str | None:
    """A finish reason as the instrumentation wrote it: an array (the convention), an array's JSON text, or one
    value; a language enum's member written out (`FinishReason.STOP`) is read as its name in lower case."""
    if isinstance(value, str) and value.startswith("["):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    reason = next((v for v in value if isinstance(v, str) and v), None) if isinstance(value, list) else text(value)
    if reason is not None and _ENUM_MEMBER.fullmatch(reason):
        return reason.rsplit(".", 1)[1].lower()
    return reason


_ENUM_MEMBER = re.compile(r"[A-Z][A-Za-z]*\.[A-Z][A-Z_]*")
_TOOL_FINISH = frozenset({"tool_calls", "tool_call", "tool_use", "function_call", "function_calls"})


@cache
def announces_tools(finish_reason: str) -> bool:
    """A finish reason that says the response ended for tool calls, in any provider's spelling."""
    return finish_reason.lower().replace("-", "_") in _TOOL_FINISH


def name_after(span: Span, prefix: str) -> str | None:
    """`execute_tool get_weather` -> `get_weather` for prefix `execute_tool`."""
    name = span.name or ""
    if name.startswith(prefix + " "):
        rest = name[len(prefix) + 1 :].strip()
        return rest or None
    return None


def payload(event: Event) -> dict[str, Any]:
    """An event's content: its attributes, overlaid with the log record body when it has one (a body sent
    as a JSON object string, as Semantic Kernel does, counts as that object)."""
    out = dict(event.attributes)
    body = event.body
    if isinstance(body, str) and body.startswith("{"):
        with contextlib.suppress(ValueError):
            body = json.loads(body)
    if isinstance(body, dict):
        out.update(body)
    elif body not in (None, ""):
        out.setdefault("content", body)
    return out


def genai_events(span: Span) -> list[tuple[str, dict[str, Any]]]:
    """The span's legacy GenAI message events (span events or log records), in order."""
    return [(e.name, payload(e)) for e in span.events if e.name.startswith("gen_ai.") and e.name.endswith(_SUFFIXES)]


_SUFFIXES = (".message", ".choice")


def is_error(span: Span) -> bool:
    return span.status_code == STATUS_ERROR


# Exceptions a framework raises to route control, not failures: LangGraph's command to a parent graph (how a
# supervisor's handoff tools move to a worker), and the signals its interrupts bubble up with.
_CONTROL_FLOW = ("ParentCommand", "GraphInterrupt", "GraphBubbleUp", "NodeInterrupt")


def is_control_flow(event: Event) -> bool:
    """An exception event recording a framework's control-flow signal."""
    kind = str(event.attributes.get("exception.type", ""))
    return event.name == "exception" and kind.rsplit(".", 1)[-1] in _CONTROL_FLOW


def raised(span: Span) -> bool:
    """The span recorded an exception that is no control-flow signal (whatever status it was left with)."""
    return any(e.name == "exception" and not is_control_flow(e) for e in span.events)


def failed(span: Span) -> bool:
    """An error status that is a failure: not one whose every recorded exception is a control-flow signal."""
    if span.status_code != STATUS_ERROR:
        return False
    exceptions = [e for e in span.events if e.name == "exception"]
    return not exceptions or not all(is_control_flow(e) for e in exceptions)


def duration_s(span: Span) -> float | None:
    """The span's start to end in seconds; None when a time is missing."""
    return max(0, span.end_ns - span.start_ns) / 1e9 if span.end_ns and span.start_ns else None
