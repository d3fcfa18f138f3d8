"""The scripted model and the ground truth of a LlamaIndex `AgentWorkflow` request, for the LlamaIndex capture
scripts (importable from their own environments)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from typing import Any

from client import Scenario
from llama_index.core.agent.workflow import AgentInput, AgentWorkflow, ToolCallResult
from llama_index.llms.openai_like import OpenAILike


def scripted_llm() -> OpenAILike:
    """The harness's scripted model as LlamaIndex's OpenAI-compatible chat model (tool calling, streamed)."""
    return OpenAILike(
        model="gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=128000,
    )


async def serve_request(
    s: Scenario,
    workflow: AgentWorkflow,
    request: str,
    entry: str,
    record_tools: Callable[[dict[str, Any]], None] = lambda run: None,
) -> None:
    """Run the workflow on one request and record its request run: the last agent's answer or the failure, every
    agent's model calls (one `AgentInput` event each) and the handoffs (a `handoff` `ToolCallResult` moves control
    from the agent of the last `AgentInput` to its `to_agent`); `record_tools` adds the tool calls where the tools
    do not record them as they run."""
    truth = s.run(entry, request)
    truth["handoffs"] = []
    calls: Counter[str] = Counter()
    acting = entry
    handler = workflow.run(user_msg=request)
    try:
        async for event in handler.stream_events():
            if isinstance(event, AgentInput):
                acting = event.current_agent_name
                calls[acting] += 1
            elif isinstance(event, ToolCallResult) and event.tool_name == "handoff":
                truth["handoffs"].append({"from": acting, "to": event.tool_kwargs["to_agent"]})
        result = await handler
        output, status = result.response.content, "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    record_tools(truth)
    s.finish(output, status, sum(calls.values()))
    truth.update(
        nested_runs_allowed=True,
        note="The request run is the workflow's, with every agent's model and tool calls; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in calls.items())
        + ".",
    )
