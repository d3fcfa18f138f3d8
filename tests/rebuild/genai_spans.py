"""Spans in the GenAI semantic conventions' shapes, built by hand for tests of one rebuild rule."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.spans import Span

TRACE = "c" * 32
RESOURCE = {"service.name": "travel"}


def span(span_id: str, parent: str | None, name: str, start: int, end: int, error: bool = False, **attrs: Any) -> Span:
    """A span of `TRACE`; ids are padded to 16 hex characters, times are seconds."""
    return Span(
        TRACE,
        span_id.rjust(16, "0"),
        parent.rjust(16, "0") if parent else None,
        name,
        1,
        start * 10**9,
        end * 10**9,
        2 if error else 0,
        "failed" if error else "",
        {k.replace("__", "."): v for k, v in attrs.items()},
        [],
        RESOURCE,
    )


def agent(span_id: str, parent: str | None, name: str, start: int, end: int, **attrs: Any) -> Span:
    return span(
        span_id,
        parent,
        f"invoke_agent {name}",
        start,
        end,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name=name,
        **attrs,
    )


def chat(span_id: str, parent: str, start: int, end: int, messages: list[dict[str, Any]], **attrs: Any) -> Span:
    return span(
        span_id,
        parent,
        "chat gpt-4o",
        start,
        end,
        gen_ai__operation__name="chat",
        gen_ai__request__model="gpt-4o",
        gen_ai__input__messages=json.dumps(messages),
        **attrs,
    )


def tool(span_id: str, parent: str, name: str, start: int, end: int, call_id: str, result: str, **attrs: Any) -> Span:
    return span(
        span_id,
        parent,
        f"execute_tool {name}",
        start,
        end,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name=name,
        gen_ai__tool__call__id=call_id,
        gen_ai__tool__call__result=result,
        **attrs,
    )
