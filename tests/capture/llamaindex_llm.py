"""LlamaIndex's model for capture scripts: `OpenAILike` on the scripted model (Chat Completions, tool calling).
Needs llama-index-llms-openai-like."""

from __future__ import annotations

import os
from typing import Any

from llama_index.llms.openai_like import OpenAILike


def scripted_llm(**options: Any) -> OpenAILike:
    """The scripted model as a LlamaIndex chat model; `options` are OpenAILike's own (max_retries, ...)."""
    return OpenAILike(
        model="gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=128000,
        **options,
    )
