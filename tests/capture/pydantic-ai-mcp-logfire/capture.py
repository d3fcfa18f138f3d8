"""pydantic-ai agents whose tools are on an MCP server in another process, traced by Pydantic Logfire
(`logfire.instrument_pydantic_ai()` and `logfire.instrument_mcp()`, content on by default), exporting OTLP/HTTP to
the recorder itself (`send_to_logfire=False`).

The grid and billing tools of `../grid.py` run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=grid, a FastMCP server
over stdio started for each request by pydantic-ai's `MCPToolset`), which exports its own spans (service
`grid-tools-mcp`) to the same recorder. `grid_desk` reads meters, opens fault tickets and quotes tariffs itself and
refers credits and account closures to `billing_clerk`, a second agent run inside its `refer_to_billing` tool with
the caller's usage; both agents' tools come from the one server, filtered per agent. A failing tool goes back to
the model as a retry prompt, pydantic-ai's default for MCP.

The ground truth is one request run per user request, entered at grid_desk, recorded the way an agent called as a
tool is: every agent's model calls (a before-model-request hook), the tool calls in the order they started, with
what the server's tools really received and returned (their log), the referral tool with the question it got and
the clerk's answer, and the answer the user got. The clerk's own run is nested. In `billing_failure` the model
backend fails inside the clerk's turn and the request raises.
"""

import asyncio
import os
import sys
from pathlib import Path

import logfire
from client import failure, text, tool
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from grid import REQUESTS
from mcp_tool_log import ToolLog, serve_all
from pydantic_ai import Agent, RunContext
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai_count import counted

logfire.configure(service_name="grid-service", send_to_logfire=False, console=False, metrics=False)
logfire.instrument_pydantic_ai()
logfire.instrument_mcp()
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
DESK_TOOLS = {"meter_reading", "open_fault_ticket", "tariff_quote"}
BILLING_TOOLS = {"issue_credit_note", "delete_account"}
RUN: dict  # the ground truth of the request being served
LOG: ToolLog  # its server's log


def desk(toolset: MCPToolset) -> Agent:
    """The two agents of one request over one server's tools; grid_desk is the entry."""
    clerk = Agent(
        model,
        name="billing_clerk",
        instructions="You handle credits and account closures of an energy utility.",
        toolsets=[toolset.filtered(lambda ctx, tool_def: tool_def.name in BILLING_TOOLS)],
        capabilities=[counted(lambda: RUN)],
    )
    entry = Agent(
        model,
        name="grid_desk",
        instructions="You serve grid customers. Refer credits and account closures to billing.",
        toolsets=[toolset.filtered(lambda ctx, tool_def: tool_def.name in DESK_TOOLS)],
        capabilities=[counted(lambda: RUN)],
    )

    @entry.tool
    async def refer_to_billing(ctx: RunContext, question: str) -> str:
        """Refer a credit or an account closure to the billing clerk."""

        async def ask() -> str:
            return (await clerk.run(question, usage=ctx.usage)).output

        return await LOG.around(RUN, "refer_to_billing", {"question": question}, ask)

    return entry


async def answer(run: dict, log: ToolLog, request: str) -> str:
    global RUN, LOG
    RUN, LOG = run, log
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "grid"}
    transport = StdioTransport(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)
    toolset = MCPToolset(Client(transport), id="grid_tools")
    async with toolset:
        return (await desk(toolset).run(request)).output


def refer(question: str) -> dict:
    return tool("refer_to_billing", {"question": question})


SCENARIOS = {
    "fault_reported": REQUESTS["fault_reported"],
    "credit_refused": (
        REQUESTS["credit_refused"][0],
        [
            refer("Credit 40 EUR back to account A-5512"),
            tool("issue_credit_note", {"account": "A-5512", "amount": 40}),
            text("The credit note failed: the billing engine is locked."),
            text("Sorry, I could not credit account A-5512: the billing engine is locked. Please try tomorrow."),
        ],
    ),
    "close_account": (
        REQUESTS["close_account"][0],
        [
            refer("Delete the energy account of customer u-2290"),
            tool("delete_account", {"user_id": "u-2290"}),
            text("Account u-2290 is deleted."),
            text("Your energy account u-2290 has been deleted."),
        ],
    ),
    "billing_failure": (
        "Read meter M-118 and credit the 25 euros you overcharged on account A-5512.",
        [
            tool("meter_reading", {"meter_id": "M-118"}),
            refer("Credit 25 EUR back to account A-5512"),
            failure(500, "model backend unavailable"),
        ],
    ),
}

asyncio.run(serve_all(SCENARIOS, "grid_desk", answer, logfire.span, logfire.force_flush))
