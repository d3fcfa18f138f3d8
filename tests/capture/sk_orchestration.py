"""Running a Semantic Kernel orchestration for a capture script: one request in a fresh `InProcessRuntime`, its
result or failure as the ground truth records it, and the tool names as SK gives them to the model."""

from __future__ import annotations

from typing import Any


async def invoke(orchestration: Any, task: str) -> tuple[str | None, str]:
    """The orchestration's answer to `task` and the run's status (`ok`, or `error` with no answer when its result
    raises)."""
    from semantic_kernel.agents.runtime import InProcessRuntime

    runtime = InProcessRuntime()
    runtime.start()
    try:
        result = await orchestration.invoke(task=task, runtime=runtime)
        return str((await result.get(timeout=120)).content), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:160]}")
        return None, "error"
    finally:
        await runtime.stop_when_idle()


def qualified(calls: list[dict[str, Any]], plugin: dict[str, str]) -> list[dict[str, Any]]:
    """Tool calls (scripted replies' or recorded ones) renamed as SK shows them to the model: <Plugin>-<function>."""
    for call in calls:
        call["name"] = f"{plugin[call['name']]}-{call['name']}"
    return calls


def qualified_replies(scenarios: dict[str, tuple[Any, list[dict[str, Any]]]], plugin: dict[str, str]) -> None:
    """Rename the scripted tool calls of every scenario ({name: (request, replies)}) as SK shows them to the model."""
    for _request, replies in scenarios.values():
        for reply in replies:
            qualified(reply.get("tool_calls", []), plugin)
