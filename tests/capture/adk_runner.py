"""One user request through Google ADK's `InMemoryRunner`, for capture scripts (needs google-adk): what the user got
is the text of the last final response that had any."""

from __future__ import annotations

from typing import Any

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
