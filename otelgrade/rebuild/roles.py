"""The role an agent's model is told it plays, where the framework's prompt states it in a fixed shape: CrewAI's
role-playing prompt (`You are {role}. {backstory}` ... `Your personal goal is: {goal}`). It names a run that no
span names (an instrumentation that writes an agent's role only when its run succeeds)."""

from __future__ import annotations

import re
from typing import Any

_ROLE_PLAYING = re.compile(r"You are (?P<role>[^\n.]{1,128})\. .*\nYour personal goal is: ", re.DOTALL)


def declared_role(messages: list[dict[str, Any]]) -> str | None:
    """The role the system instructions of a model call's input give its agent, where they give one."""
    for message in messages:
        content = message.get("content")
        if message.get("role") in ("system", "developer") and isinstance(content, str):
            found = _ROLE_PLAYING.match(content)
            if found:
                return found["role"].strip() or None
    return None
