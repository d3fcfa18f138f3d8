"""A LangChain callback counting chat model calls per agent, for the LangGraph capture scripts (imported from their
own environments)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler


class CountCalls(BaseCallbackHandler):
    """Adds one to `counter[agent_name]` at each start of the agent's chat model."""

    def __init__(self, counter: Counter[str], agent_name: str) -> None:
        self.counter = counter
        self.agent_name = agent_name

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.counter[self.agent_name] += 1
