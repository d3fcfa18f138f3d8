"""Control transfers between agents (handoffs, delegations): which tool calls are one, and to whom."""

from __future__ import annotations

import re

# How frameworks name their control transfers: OpenAI Agents and LangGraph (`transfer_to_<agent>`,
# `transfer_back_to_<agent>`), ADK (`transfer_to_agent`), CrewAI's delegation tools.
_TRANSFER = re.compile(r"^(transfer_(back_)?to_?|delegate_work_to_coworker$|ask_question_to_coworker$)")
_WORDS = re.compile(r"[a-z0-9]+")
_TARGET_KEYS = ("agent_name", "coworker", "agent", "to", "target", "member_id")
_NAMED_TARGET = re.compile(r"^transfer_(?:back_)?to_(.+)$")


def is_transfer(name: str) -> bool:
    """Whether a tool call hands control to another agent (by the frameworks' naming of transfers)."""
    return bool(_TRANSFER.match("_".join(_WORDS.findall(name.lower()))))


def named_agent(tool_name: str, arguments: object) -> str | None:
    """The agent a transfer or delegation names: an argument that says whom (`coworker`, `agent_name`, ...),
    else the name's own target (`transfer_to_billing_agent`)."""
    if isinstance(arguments, dict):
        for key in _TARGET_KEYS:
            if isinstance(arguments.get(key), str) and arguments[key]:
                return str(arguments[key])
    target = _NAMED_TARGET.match(tool_name)
    return target.group(1) if target and target.group(1) not in ("agent", "coworker") else None
