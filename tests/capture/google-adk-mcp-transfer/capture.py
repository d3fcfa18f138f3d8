"""Google ADK's own GenAI spans on two agents whose tools are on an MCP server in another process, the root
transferring to a sub-agent.

The energy utility's tools (`../grid.py`) run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=grid, over
stdio), reached through ADK's `McpToolset`, filtered per agent and started for each request. `meter_desk` (LlmAgent:
meter_reading, open_fault_ticket, tariff_quote) has `billing_desk` (issue_credit_note, which fails on the server,
delete_account) as a sub-agent: the model calls ADK's transfer tool, after which billing_desk acts and answers the
user in the same invocation. The model is LiteLLM's OpenAI client on the scripted model. ADK writes its spans
through the global TracerProvider (OTLP/HTTP protobuf); message content is on
(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY).

The ground truth is one request run per user request, entered at meter_desk: every agent's model calls (counted by
before_model_callback), the calls the server's tools really ran (their log), the transfer as a handoff, never as a
tool call, and the answer the user got from the runner's final event. In `billing_backend_down` the model backend
fails during billing_desk's turn.
"""

import asyncio
import os
import sys
from pathlib import Path

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

from adk_runner import final_answer
from client import failure, tool
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
from grid import REQUESTS
from mcp import StdioServerParameters
from mcp_tool_log import ToolLog, serve_all
from telemetry import flush, traced

tracer = traced("energy-grid-desk", lambda: [])
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
RUN: dict  # the ground truth of the request being served


def count_call(callback_context, llm_request):
    RUN["llm_calls"] += 1


def handed_over(tool, args, tool_context, tool_response):
    """ADK's transfer tool, as it ran: a handoff of the request, not one of its tool calls."""
    if tool.name == "transfer_to_agent":
        RUN["handoffs"].append({"from": tool_context.agent_name, "to": args["agent_name"]})


def model() -> LiteLlm:
    return LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"])


def toolset(log: ToolLog, names: list[str]) -> McpToolset:
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "grid"}
    server = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)
    return McpToolset(connection_params=StdioConnectionParams(server_params=server, timeout=30), tool_filter=names)


async def answer(run: dict, log: ToolLog, request: str) -> str:
    global RUN
    RUN = run
    meter_tools = toolset(log, ["meter_reading", "open_fault_ticket", "tariff_quote"])
    billing_tools = toolset(log, ["issue_credit_note", "delete_account"])
    billing_desk = LlmAgent(
        name="billing_desk",
        model=model(),
        instruction="You issue credit notes and close accounts.",
        description="Issues credit notes and closes customer accounts.",
        tools=[billing_tools],
        before_model_callback=count_call,
    )
    meter_desk = LlmAgent(
        name="meter_desk",
        model=model(),
        instruction="You handle meters, faults and tariffs; send credits and accounts to billing_desk.",
        tools=[meter_tools],
        sub_agents=[billing_desk],
        before_model_callback=count_call,
        after_tool_callback=handed_over,
    )
    try:
        final = await final_answer(meter_desk, request, "energy", "customer-1")
    finally:
        await meter_tools.close()
        await billing_tools.close()
    return str(final)


def transfer() -> dict:
    return tool("transfer_to_agent", {"agent_name": "billing_desk"})


SCENARIOS = {
    "fault_reported": REQUESTS["fault_reported"],
    "credit_refused": (REQUESTS["credit_refused"][0], [transfer()] + REQUESTS["credit_refused"][1]),
    "close_account": (REQUESTS["close_account"][0], [transfer()] + REQUESTS["close_account"][1]),
    "billing_backend_down": (
        "Meter M-207 has not reported for a month and I was billed an estimate; credit account A-5512 40 euros.",
        [tool("meter_reading", {"meter_id": "M-207"}), transfer(), failure(500, "model backend unavailable")],
    ),
}

asyncio.run(serve_all(SCENARIOS, "meter_desk", answer, tracer.start_as_current_span, flush))
