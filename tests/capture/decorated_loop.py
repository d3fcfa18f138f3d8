"""A hand-written tool loop on the OpenAI client whose agent and tools are the user's own functions, for SDKs
that trace them by decorating them (MLflow's `@mlflow.trace`, Langfuse's `@observe`):

    tools = {name: decorate_tool(f) for name, f in TOOLS.items()}
    run_scenarios(decorate_agent(agent(client, tools)), tracer, flush)

The tools are the standard ones (`scenarios.py`), recording what they received and returned; a failing tool's
error goes back to the model as its answer. Each scenario is wrapped in a `handle_request` span, as a web
service would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from client import Scenario
from scenarios import STANDARD, travel_tools

current: Scenario  # the scenario being captured

TOOLS = {f.__name__: f for f in travel_tools(lambda: current)}
SCHEMAS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in TOOLS
]


def agent(client: Any, traced_tools: dict[str, Callable[..., str]]) -> Callable[[str], str | None]:
    """The agent function (named `travel_agent`, as its span will be), calling `traced_tools` by name."""

    def travel_agent(request: str) -> str | None:
        messages = [{"role": "system", "content": "You are a travel assistant."}, {"role": "user", "content": request}]
        while True:
            current.runs[-1]["llm_calls"] += 1
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                try:
                    result = traced_tools[call.function.name](**json.loads(call.function.arguments))
                except RuntimeError as exc:
                    result = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    return travel_agent


def run_scenarios(
    travel_agent: Callable[[str], str | None],
    tracer: Any,
    flush: Callable[[], object],
    names: Iterable[str] = STANDARD,
    lacks: list[str] | None = None,
) -> None:
    """Capture the named scenarios; every run's ground truth lacks `lacks` (what a trace with content hidden
    cannot carry)."""
    global current
    for name in names:
        requests, replies = STANDARD[name]
        with Scenario(name, replies) as current:
            with tracer.start_as_current_span("handle_request"):
                for request in requests:
                    current.run("travel_agent", request)
                    current.runs[-1]["llm_calls"] = 0
                    try:
                        answer, status = travel_agent(request), "ok"
                    except Exception as exc:
                        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
                        answer, status = None, "error"
                    current.finish(answer, status, current.runs[-1]["llm_calls"], lacks=lacks)
            flush()
