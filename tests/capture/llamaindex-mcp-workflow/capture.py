"""A LlamaIndex `AgentWorkflow` of two `FunctionAgent`s whose tools are on an MCP server in another process, traced
by openinference-instrumentation-llama-index, with openinference-instrumentation-mcp carrying the trace context to
the server on both sides.

The energy utility's tools (`../grid.py`) run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=grid, the MCP
SDK's server over stdio, which writes its own server spans as service `grid-tools-mcp`); llama-index-tools-mcp's
`McpToolSpec` makes them `FunctionTool`s, filtered per agent, through a `BasicMCPClient` that starts the server for
each session. `meter_desk` (meter_reading, open_fault_ticket, tariff_quote) may hand over to `billing_desk`
(issue_credit_note, which fails, delete_account) with the workflow's own `handoff` tool (`to_agent`). The agents talk
Chat Completions to the scripted model through `OpenAILike`. Each request runs inside a `handle_request` span.

The ground truth is the request run of the workflow, entered at meter_desk: the user's request, the last agent's
answer, every agent's model calls (one `AgentInput` event each), the calls the server's tools really ran (their
log), and the handoffs, from the workflow's own events (a `handoff` `ToolCallResult` moves control from the agent of
the last `AgentInput` to its `to_agent`). In `billing_backend_down` the model backend fails during billing_desk's
turn and the workflow fails.
"""

import asyncio
import os
import sys
from pathlib import Path

from client import failure, tool
from grid import REQUESTS
from llama_index.core.agent.workflow import AgentInput, AgentWorkflow, FunctionAgent, ToolCallResult
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from llamaindex_llm import scripted_llm
from mcp_tool_log import ToolLog, serve_all
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from openinference.instrumentation.mcp import MCPInstrumentor
from telemetry import flush, traced

tracer = traced("energy-service-desk", lambda: [LlamaIndexInstrumentor(), MCPInstrumentor()])
llm = scripted_llm()
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
METER_TOOLS = ["meter_reading", "open_fault_ticket", "tariff_quote"]
BILLING_TOOLS = ["issue_credit_note", "delete_account"]


async def workflow(log: ToolLog) -> AgentWorkflow:
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "grid"}
    env["CAPTURE_MCP_INSTRUMENT"] = "openinference"
    client = BasicMCPClient(sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)

    async def tools(names: list[str]) -> list:
        return await McpToolSpec(client=client, allowed_tools=names).to_tool_list_async()

    meter_desk = FunctionAgent(
        name="meter_desk",
        description="Reads meters, opens fault tickets and quotes tariffs.",
        llm=llm,
        tools=await tools(METER_TOOLS),
        can_handoff_to=["billing_desk"],
        system_prompt="You handle meters, faults and tariffs; credits and accounts go to billing_desk.",
    )
    billing_desk = FunctionAgent(
        name="billing_desk",
        description="Issues credit notes and closes accounts.",
        llm=llm,
        tools=await tools(BILLING_TOOLS),
        can_handoff_to=[],
        system_prompt="You issue credit notes and close accounts.",
    )
    return AgentWorkflow(agents=[meter_desk, billing_desk], root_agent="meter_desk")


async def answer(run: dict, log: ToolLog, request: str) -> str:
    acting = "meter_desk"
    handler = (await workflow(log)).run(user_msg=request)
    async for event in handler.stream_events():
        if isinstance(event, AgentInput):
            acting = event.current_agent_name
            run["llm_calls"] += 1
        elif isinstance(event, ToolCallResult) and event.tool_name == "handoff":
            run["handoffs"].append({"from": acting, "to": event.tool_kwargs["to_agent"]})
    return str((await handler).response.content)


def hand(reason: str) -> dict:
    return tool("handoff", {"to_agent": "billing_desk", "reason": reason})


SCENARIOS = {
    "fault_reported": REQUESTS["fault_reported"],
    "credit_refused": (REQUESTS["credit_refused"][0], [hand("A credit note.")] + REQUESTS["credit_refused"][1]),
    "close_account": (REQUESTS["close_account"][0], [hand("An account closure.")] + REQUESTS["close_account"][1]),
    "billing_backend_down": (
        "Meter M-207 has not reported for a month and I was billed an estimate; credit account A-5512 40 euros.",
        [
            tool("meter_reading", {"meter_id": "M-207"}),
            hand("The customer wants a credit note for an estimated bill."),
            failure(500, "model backend unavailable"),
        ],
    ),
    "two_meters": REQUESTS["two_meters"],
}

asyncio.run(serve_all(SCENARIOS, "meter_desk", answer, tracer.start_as_current_span, flush))
