"""LangChain's run metadata as instrumentations record it (a `metadata` attribute holding JSON), read the same
under every schema that writes it (OpenInference, MLflow): the LangGraph node a span runs in (`langgraph_node`)
and the agent a LangGraph handoff tool hands to (`__handoff_destination`, the supervisor's and swarm's tools)."""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild.messages import loads
from otelgrade.rebuild.span_readers import text

_DESTINATION = "__handoff_destination"


def metadata(span: Span) -> dict[str, Any]:
    """The framework's metadata the span records (LangChain's run metadata, as JSON)."""
    value = span.attributes.get("metadata")
    doc = loads(value) if isinstance(value, str) and value.startswith("{") else None
    return doc if isinstance(doc, dict) else {}


def graph_node(span: Span) -> str | None:
    """The LangGraph node the span runs in (`langgraph_node` in its metadata)."""
    value = span.attributes.get("metadata")
    if not isinstance(value, str) or "langgraph_node" not in value:
        return None
    return text(metadata(span).get("langgraph_node"))


def is_graph_node(span: Span) -> bool:
    """A span that runs one node of a graph (named as the node its metadata names): a step of its run, even where
    its name (`agent`) makes an instrumentation mark it an agent."""
    return graph_node(span) == span.name


def hands_to(span: Span) -> str | None:
    """The agent a LangGraph handoff tool's span says it hands control to."""
    value = span.attributes.get("metadata")
    if not isinstance(value, str) or _DESTINATION not in value:
        return None
    return text(metadata(span).get(_DESTINATION))


def tool_message(doc: Any) -> dict[str, Any] | None:
    """The fields of a LangChain ToolMessage, as its dict (`{"type": "tool", "content", ...}`) or serialized by
    LangChain.js (`{"lc": 1, "id": [..., "ToolMessage"], "kwargs": {...}}`): the tool's own name, the call id and
    the status it answers with."""
    if not isinstance(doc, dict):
        return None
    if doc.get("type") == "tool" and "content" in doc:
        return doc
    kind, fields = doc.get("id"), doc.get("kwargs")
    if doc.get("lc") and isinstance(kind, list) and kind[-1:] == ["ToolMessage"] and isinstance(fields, dict):
        return fields
    return None


def command(doc: Any) -> tuple[str, list[Any]] | None:
    """A LangGraph `Command` a tool returned to route the graph (`{"goto": ..., "update": {"messages": [...]}}`,
    LangGraph.js's with `"lg_name": "Command"` and `goto` a list): the one node it goes to, and its update's
    messages."""
    if not isinstance(doc, dict) or not isinstance(update := doc.get("update"), dict):
        return None
    goto = doc.get("goto")
    goto = goto[0] if isinstance(goto, list) and len(goto) == 1 else goto
    node = text(goto) if isinstance(goto, str) else None
    messages = update.get("messages")
    return (node, messages if isinstance(messages, list) else []) if node else None


def answered(messages: list[Any], call_id: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """Of a Command's update: the ToolMessage that answers the call (by its id, else the last one), and the agent
    whose response asked for it (the `name` a LangGraph agent gives its messages)."""
    replies = [m for m in map(tool_message, messages) if m is not None]
    reply = next((m for m in replies if call_id and m.get("tool_call_id") == call_id), replies[-1] if replies else None)
    asked = reply.get("tool_call_id") if reply else None
    for message in messages:
        fields = message.get("kwargs") if isinstance(message, dict) and message.get("lc") else message
        if (
            isinstance(fields, dict)
            and asked
            and any(isinstance(c, dict) and c.get("id") == asked for c in fields.get("tool_calls") or ())
        ):
            return reply, text(fields.get("name"))
    return reply, None
