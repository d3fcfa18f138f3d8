"""LangChain's run metadata as instrumentations record it (a `metadata` attribute holding JSON), read the same
under every schema that writes it (OpenInference, MLflow): the LangGraph node a span runs in (`langgraph_node`)
and the agent a LangGraph handoff tool hands to (`__handoff_destination`, the supervisor's and swarm's tools);
and what a LangChain tool returned (its ToolMessage, or a `Command` sending the graph elsewhere), read the same
under every schema that records it as JSON (MLflow, Langfuse)."""

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


def command_goto(output: Any) -> str | None:
    """The node a LangGraph `Command` a tool returned sends the graph to (one node, named)."""
    if isinstance(output, dict) and isinstance(output.get("goto"), str) and isinstance(output.get("update"), dict):
        return text(output["goto"])
    return None


def tool_message(output: Any, call_id: str | None = None) -> dict[str, Any]:
    """The LangChain ToolMessage a tool returned, as a dict (`{"type": "tool", "content", "tool_call_id",
    "status"}`): the output itself, or, where the tool returned a `Command`, the one of its update that answers the
    call (by its id, else the last); else an empty dict."""
    if command_goto(output) is not None:
        replies = [m for m in output["update"].get("messages") or () if isinstance(m, dict) and m.get("type") == "tool"]
        output = next(
            (m for m in replies if call_id and m.get("tool_call_id") == call_id), replies[-1] if replies else None
        )
    return output if isinstance(output, dict) and output.get("type") == "tool" and "content" in output else {}
