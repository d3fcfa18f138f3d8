"""Microsoft Agent Framework agents for capture scripts (imported from their own environments): an Agent on the
scripted model whose model calls a chat middleware counts."""

from __future__ import annotations

import os
from collections.abc import MutableMapping, Sequence
from typing import Any

from agent_framework import Agent, chat_middleware
from agent_framework.openai import OpenAIChatCompletionClient


def counted_agent(
    name: str, instructions: str, tools: list[Any], calls: MutableMapping[str, int], middleware: Sequence[Any] = ()
) -> Agent:
    """An Agent named `name` on OPENAI_BASE_URL's chat completions; each of its model calls adds one to
    `calls[name]` (in the order agents first act), then `middleware` runs."""

    @chat_middleware
    async def count(context: Any, call_next: Any) -> None:
        calls[name] = calls.get(name, 0) + 1
        await call_next()

    client = OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])
    return Agent(
        client, instructions, name=name, description=instructions, tools=tools, middleware=[count, *middleware]
    )
