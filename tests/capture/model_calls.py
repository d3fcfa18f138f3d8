"""Model calls counted where they leave the process: an HTTP client (httpx2, as the `openai` SDK uses) that notes
which agent made each request, a client retry not counted again; and AutoGen's OpenAI model client built on it.
Importable from any capture environment with the `openai` SDK (AutoGen's client only where autogen-ext is)."""

from __future__ import annotations

import os
from typing import Any

import httpx2


def counting_http(owner: str, acted: list[str]) -> httpx2.AsyncClient:
    """An HTTP client that appends `owner` to `acted` for each model request it sends (not for a retry)."""

    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":
            acted.append(owner)

    return httpx2.AsyncClient(event_hooks={"request": [count]})


def autogen_model(owner: str, acted: list[str], **model_info: Any) -> Any:
    """AutoGen's `OpenAIChatCompletionClient` for the scripted model, its requests counted for `owner`;
    `model_info` overrides the capabilities declared (a gpt-4o-class model with tools, JSON and structured output)."""
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    return OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": True,
            "family": "gpt-4o",
            "structured_output": True,
            **model_info,
        },
        http_client=counting_http(owner, acted),
    )


def autogen_assistant(name: str, description: str, tools: list[Any], acted: list[str], trade: str) -> Any:
    """An AutoGen `AssistantAgent` of `trade` ("the power company's") on `autogen_model`, that keeps calling
    `tools` until it answers and then reflects on their results."""
    from autogen_agentchat.agents import AssistantAgent

    return AssistantAgent(
        name,
        model_client=autogen_model(name, acted),
        tools=tools,
        description=description,
        system_message=f"You are {trade} {name.replace('_', ' ')}. {description}",
        reflect_on_tool_use=True,
        max_tool_iterations=10,  # keep calling tools until it answers
    )
