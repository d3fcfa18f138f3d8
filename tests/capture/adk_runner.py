"""Google ADK for capture scripts (needs google-adk): one user request through ADK's `InMemoryRunner` (what the user
got is the text of the last final response that had any), agents that count their model calls, and the ground truth
of a request entered at a workflow agent."""

from __future__ import annotations

import os
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types


async def final_answer(agent: Any, request: str, app: str, user: str) -> str | None:
    """Run `request` in a new session of `app` at `agent`; the answer, or None when no final response had text.
    Raises what the run raised."""
    runner = InMemoryRunner(agent=agent, app_name=app)
    session = await runner.session_service.create_session(app_name=app, user_id=user)
    answer = None
    async for event in runner.run_async(
        user_id=user,
        session_id=session.id,
        new_message=types.Content(role="user", parts=[types.Part(text=request)]),
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text or "" for p in event.content.parts) or answer
    return answer


def counting_agent(name: str, instruction: str, tools: list[Any], calls: dict[str, int], **extra: Any) -> LlmAgent:
    """An `LlmAgent` on LiteLlm('openai/gpt-4o-mini') at OPENAI_BASE_URL that counts its model calls into `calls`
    (before_model_callback) and answers the model `{"error": ...}` for a tool that raised (ADK otherwise aborts)."""

    def count_call(callback_context: Any, llm_request: Any) -> None:
        calls[callback_context.agent_name] = calls.get(callback_context.agent_name, 0) + 1

    def recover(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict[str, str]:
        return {"error": str(error)}

    return LlmAgent(
        name=name,
        model=LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"]),
        instruction=instruction,
        tools=tools,
        before_model_callback=count_call,
        on_tool_error_callback=recover,
        **extra,
    )


async def workflow_request(
    s: Any, root: Any, request: str, app: str, calls: dict[str, int], lacks: list[str] | None = None
) -> dict[str, Any]:
    """Record one request run entered at the workflow agent `root` (no handoffs unless a transfer adds them): the
    answer the user got last, status error with no answer when the run raised, the model calls its agents counted
    into `calls`, and `lacks`. Returns the run, whose `handoffs` a transfer callback may append to."""
    run: dict[str, Any] = s.run(root.name, request)
    run.update(handoffs=[], nested_runs_allowed=True)
    calls.clear()
    status = "ok"
    try:
        answer = await final_answer(root, request, app, "customer-1")
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {str(exc)[:160]}")
        answer, status = None, "error"
    s.finish(answer, status, sum(calls.values()), lacks=lacks)
    run["note"] = f"Model calls per agent: {dict(calls)}; the workflow's steps are {[a.name for a in root.sub_agents]}."
    return run
