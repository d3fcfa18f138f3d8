"""The OpenAI Agents SDK's own record of one request, for the Agents SDK capture scripts (imported from their own
environments): RunHooks given to the runner and to an agent tool's nested run."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from agents import RunHooks


class Hooks(RunHooks):
    """Model calls and tool calls per agent, handoffs and each agent's output, as the SDK reports them.

    The call of `agent_tool` (an agent called as a tool) is placed in the request's tool calls when it starts (its
    agent's own calls follow it) and gets its result when the nested run returns."""

    def __init__(self, request_run: dict[str, Any], agent_tool: str) -> None:
        self.request_run = request_run
        self.agent_tool = agent_tool
        self.calls: Counter[str] = Counter()  # model calls per agent
        self.tools: dict[str, list[str]] = {}  # tool names per agent
        self.outputs: dict[str, str] = {}
        self.agent_tools: dict[str, dict[str, Any]] = {}  # call id -> the agent tool's ground-truth entry

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
        self.calls[agent.name] += 1

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        self.request_run.setdefault("handoffs", []).append({"from": from_agent.name, "to": to_agent.name})

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        self.tools.setdefault(agent.name, []).append(tool.name)
        if tool.name == self.agent_tool:
            entry = {"name": tool.name, "arguments": json.loads(context.tool_arguments), "result": None, "error": False}
            self.request_run["tool_calls"].append(entry)
            self.agent_tools[context.tool_call_id] = entry

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        if tool.name == self.agent_tool:
            self.agent_tools[context.tool_call_id]["result"] = str(result)

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        self.outputs[agent.name] = str(output)

    def note(self, entry: str) -> str:
        """Each agent's own run, as the SDK reported it, for the scenario's note."""
        runs = [
            f"{name}: {self.calls[name]} model call(s), tools {self.tools.get(name, [])}, "
            f"answer {self.outputs.get(name)!r}"
            for name in self.calls
        ]
        return (
            f"The request run starts at {entry} and holds every agent's model and tool calls. "
            "Each agent's own run is also reported, nested: " + "; ".join(runs) + "."
        )
