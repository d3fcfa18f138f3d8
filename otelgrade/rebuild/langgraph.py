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
