"""OpenAI Agents SDK agents whose tools are on an MCP server in another process, both sides traced.

The hotel tools run in `../hotel_mcp_server.py`, started over stdio by `MCPServerStdio` for each scenario;
that process exports its own spans (service `hotel-tools-mcp`) to the same recorder. The agent side is traced
by openinference-instrumentation-openai-agents; the MCP SDK (mcp 2.x) writes its own client and server spans
and carries the trace context in each request's `_meta`, so one tool call is seen as the agent's tool span,
the MCP client's span and the server's span in the other service.

`front_desk` reserves rooms itself, escalates billing to `billing_agent` through a handoff named
`escalate_to_billing`, and asks `rate_researcher` for rates through an agent tool named `ask_researcher`.
The ground truth is one request run per user request, entered at front_desk: every agent's model calls
(RunHooks), the tool calls in the order they ran with what the server's tools really received and returned
(their log), the agent tool's call with its answer, and the handoffs (never tool calls of the request).
"""

import asyncio
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from agents import Agent, OpenAIChatCompletionsModel, RunHooks, Runner, handoff
from agents.mcp import MCPServerStdio
from client import Scenario, failure, text, tool
from hotel import REQUESTS
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-front-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-front-desk")
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
AGENT_TOOL = "ask_researcher"


class ToolLog:
    """The MCP server's record of the calls its tools really ran, read as they arrive."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkstemp(prefix="hotel-tools-", suffix=".jsonl")[1])
        self.read = 0

    def drain(self, run: dict) -> None:
        lines = self.path.read_text().splitlines()
        run["tool_calls"] += [json.loads(line) for line in lines[self.read :]]
        self.read = len(lines)


class Hooks(RunHooks):
    """Model calls per agent, handoffs, and the agent tool's call placed where it started."""

    def __init__(self, run: dict, log: ToolLog) -> None:
        self.run, self.log = run, log
        self.calls: Counter[str] = Counter()
        self.entries: dict[str, dict] = {}

    async def on_llm_start(self, context, agent, system_prompt, input_items) -> None:
        self.calls[agent.name] += 1

    async def on_handoff(self, context, from_agent, to_agent) -> None:
        self.run["handoffs"].append({"from": from_agent.name, "to": to_agent.name})

    async def on_tool_start(self, context, agent, tool) -> None:
        if tool.name == AGENT_TOOL:
            self.log.drain(self.run)
            entry = {"name": tool.name, "arguments": json.loads(context.tool_arguments), "result": None, "error": False}
            self.run["tool_calls"].append(entry)
            self.entries[context.tool_call_id] = entry

    async def on_tool_end(self, context, agent, tool, result) -> None:
        if tool.name == AGENT_TOOL:
            self.entries[context.tool_call_id]["result"] = str(result)


def team(server: MCPServerStdio, hooks: Hooks) -> Agent:
    """The agents of one request, every one with the MCP server's tools; front_desk is the entry."""
    billing = Agent(
        name="billing_agent",
        instructions="You refund deposits and close guest accounts.",
        model=model,
        mcp_servers=[server],
    )
    researcher = Agent(
        name="rate_researcher", instructions="You research nightly hotel rates.", model=model, mcp_servers=[server]
    )
    front_desk = Agent(
        name="front_desk",
        instructions="You are a hotel front desk. Escalate billing; ask the researcher for rates.",
        model=model,
        mcp_servers=[server],
        tools=[
            researcher.as_tool(
                tool_name=AGENT_TOOL, tool_description="Ask the rate researcher about nightly rates.", hooks=hooks
            )
        ],
        handoffs=[handoff(billing, tool_name_override="escalate_to_billing")],
    )
    return front_desk


SCENARIOS = {
    "happy": (REQUESTS["happy"][0][0], REQUESTS["happy"][1]),
    "agent_as_tool": (
        "What does a night in Lisbon cost? Then reserve LIS-204.",
        [
            tool(AGENT_TOOL, {"input": "Nightly rate in Lisbon"}),
            tool("quote_rate", {"city": "Lisbon"}),
            text("Lisbon: 140 EUR a night."),
            tool("reserve_room", {"room_id": "LIS-204"}),
            text("A night in Lisbon is 140 EUR; LIS-204 is reserved, reference R-88123."),
        ],
    ),
    "escalation_tool_error": (
        REQUESTS["tool_error"][0][0],
        [
            tool("escalate_to_billing", {}),
            tool("refund_deposit", {"amount": 80}),
            text("I could not refund it: the refund window is closed."),
        ],
    ),
    "forbidden_after_escalation": (
        REQUESTS["forbidden"][0][0],
        [
            tool("escalate_to_billing", {}),
            tool("delete_account", {"user_id": "c-77"}),
            text("Your profile c-77 has been removed."),
        ],
    ),
    "agent_error": (
        REQUESTS["agent_error"][0][0],
        [tool("find_rooms", {"city": "Atlantis"}), failure(500, "model backend unavailable")],
    ),
}


async def serve(s: Scenario, request: str) -> None:
    log = ToolLog()
    run = s.run("front_desk", request)
    run.update(handoffs=[], nested_runs_allowed=True)
    hooks = Hooks(run, log)
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path)}
    params = {"command": sys.executable, "args": [str(SERVER_SCRIPT), "stdio"], "env": env}
    async with MCPServerStdio(
        params=params, name="hotel-tools", cache_tools_list=True, client_session_timeout_seconds=30
    ) as server:
        entry = team(server, hooks)
        try:
            result = await Runner.run(entry, request, hooks=hooks)
            output, status = result.final_output, "ok"
        except Exception as exc:
            print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
            output, status = None, "error"
    log.drain(run)
    log.path.unlink()
    s.finish(output, status, sum(hooks.calls.values()))
    run["note"] = f"Model calls per agent: {dict(hooks.calls)}."


async def main() -> None:
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await serve(s, request)
            provider.force_flush()


asyncio.run(main())
