"""The control transfers a `langgraph_supervisor` graph made, read from its messages, for the LangGraph capture
scripts (imported from their own environments)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph_supervisor.handoff import METADATA_KEY_HANDOFF_DESTINATION, METADATA_KEY_IS_HANDOFF_BACK


def graph_handoffs(
    messages: Sequence[Any], holder: Callable[[str], str], parent: Callable[[str], str]
) -> list[dict[str, str]]:
    """In order: each handoff tool message (marked with its destination), from `holder(tool name)`, the supervisor
    that holds the tool, and each agent's handoff back (a message pair the library marks as such) to
    `parent(agent)`."""
    out = []
    for message in messages:
        metadata = message.response_metadata or {}
        if isinstance(message, ToolMessage) and METADATA_KEY_HANDOFF_DESTINATION in metadata:
            out.append({"from": holder(message.name), "to": metadata[METADATA_KEY_HANDOFF_DESTINATION]})
        elif isinstance(message, AIMessage) and metadata.get(METADATA_KEY_IS_HANDOFF_BACK):
            out.append({"from": message.name, "to": parent(message.name)})
    return out
