"""Control transfers between agents (handoffs, delegations): what a tool call says of the agent it hands to.

What decides whether a call IS a transfer is the trace's behaviour (`handoffs`); this module reads what a call
says: whom an argument names, whether its name names an agent, and the frameworks' own names for transfers,
which are hints (`NAME_HINTS`) that only break ties the behaviour leaves open.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from otelgrade.rebuild.dialects import ANSWER_TOOLS, TRANSFER_NAMES

NAME_HINTS = True
"""Whether the frameworks' names for transfers and answer tools break ties. Off, the rebuild decides from
behaviour alone (the name-blind test switches it off: `transfers.NAME_HINTS = False`)."""

_TRANSFER = re.compile("|".join(f"(?:{p})" for p in TRANSFER_NAMES) or r"(?!)")
_WORDS = re.compile(r"[a-z0-9]+")
# Argument keys that say whom a call hands to, whatever the tool is called (a call's schema, not a tool's name).
_TARGET_KEYS = ("agent_name", "coworker", "agent", "to", "target", "member_id", "agent_id", "recipient")
_NAMED_TARGET = re.compile(r"^transfer_(?:back_)?to_(.+)$")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_QUALIFIERS = re.compile(r"[.:/-]")


def is_transfer(name: str) -> bool:
    """Whether a framework's naming says a tool call hands control to another agent (a hint: False with the hints
    off)."""
    return NAME_HINTS and bool(_TRANSFER.match("_".join(_WORDS.findall(name.lower()))))


def answer_tools() -> frozenset[str]:
    """The frameworks' answer tools by name (a hint: none with the hints off)."""
    return ANSWER_TOOLS if NAME_HINTS else frozenset()


def target_argument(arguments: object) -> str | None:
    """The agent a call's arguments say it hands to (`coworker`, `agent_name`, `member_id`, ...), if any."""
    if isinstance(arguments, dict):
        for key in _TARGET_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def named_agent(tool_name: str, arguments: object) -> str | None:
    """The agent a transfer or delegation names: an argument that says whom, else (a hint) the name's own target
    (`transfer_to_billing_agent`)."""
    if (target := target_argument(arguments)) is not None:
        return target
    if not NAME_HINTS:
        return None
    target_match = _NAMED_TARGET.match(tool_name)
    return target_match.group(1) if target_match and target_match.group(1) not in ("agent", "coworker") else None


def names(tool_name: str, arguments: object, agent: str) -> bool:
    """Whether a call names `agent`: an argument value that is its name or a list holding it (a delegation to several
    agents at once), or a tool name that ends with it as its own words (`handover_to_billing` names `billing`,
    `billing_agent-billing_agent` names `billing_agent`)."""
    if not agent:
        return False
    if isinstance(arguments, dict) and any(
        v == agent or (isinstance(v, list) and agent in v) for v in arguments.values()
    ):
        return True
    if tool_name == agent or not tool_name.endswith(agent):
        return False
    return bool(_SEPARATORS.fullmatch(tool_name[-len(agent) - 1]))


def is_the_agent(tool_name: str, agents: Collection[str]) -> bool:
    """Whether a tool IS an agent called as a tool: its name is an agent's, or one of them is qualified and the
    other is its last part (`billing_agent-billing_agent`, `travel.billing_agent`)."""
    if tool_name in agents:
        return True
    tool_parts = _QUALIFIERS.split(tool_name)
    return any(a and (tool_parts[-1] == a or _QUALIFIERS.split(a)[0] == tool_name) for a in agents)


def told(result: str | None, agent: str | None) -> bool:
    """Whether a call's result names `agent` as a word of its own (`Successfully transferred to billing`)."""
    if not result or not agent:
        return False
    start = result.find(agent)
    while start >= 0:
        end = start + len(agent)
        before = result[start - 1] if start else " "
        after = result[end] if end < len(result) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = result.find(agent, start + 1)
    return False
