"""A pydantic-ai capability counting every model request into a capture's ground truth, for the pydantic-ai capture
scripts (imported from their own environments)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.capabilities import Hooks


def counted(run: Callable[[], dict[str, Any]]) -> Hooks:
    """Hooks that add one to `run()["llm_calls"]` before each model request."""
    hooks = Hooks()

    @hooks.on.before_model_request
    async def count(ctx: Any, request_context: Any) -> Any:
        run()["llm_calls"] += 1
        return request_context

    return hooks
