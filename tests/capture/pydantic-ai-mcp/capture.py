"""pydantic-ai agents whose tools are on an MCP server in another process, both sides traced.

The insurance-claims tools run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=insurance, a FastMCP server over stdio
started for each scenario by pydantic-ai's `MCPToolset`, itself on the FastMCP client); that process exports its own
spans (service `insurance-tools-mcp`) to the same recorder. The agents are traced by pydantic-ai's own
instrumentation (the `Instrumentation` capability, no Logfire); FastMCP and the MCP SDK write their own client and
server spans, and openinference-instrumentation-mcp, on both sides, carries the trace context across. One tool call
is so seen as pydantic-ai's tool span, the MCP client's spans and the server's spans in the other service.

`intake_agent` files claims itself (lookup_policy, file_claim, premium_quote) and asks `claims_auditor`, a second
agent run inside its `consult_auditor` tool with the caller's usage, about payouts, claim status and account
closures (issue_payout, claim_status, delete_account): both agents' tools come from the one server, filtered per
agent. A failing tool goes back to the model as a retry prompt, pydantic-ai's default for MCP.

The ground truth is one request run per user request, entered at intake_agent, recorded the way an agent called as a
tool is: every agent's model calls (a before-model-request hook), the tool calls in the order they started, with
what the server's tools really received and returned (their log), the delegation tool with the request it got and
the auditor's answer, and the answer the user got. The auditor's own run is nested.
"""

import asyncio
import os
import sys
from pathlib import Path

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from insurance import delegation_scenarios
from mcp_tool_log import ToolLog, serve_all
from openinference.instrumentation.mcp import MCPInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai_count import counted

provider = TracerProvider(resource=Resource.create({"service.name": "claims-intake"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
MCPInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("claims-intake")
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
INTAKE_TOOLS = {"lookup_policy", "file_claim", "premium_quote"}
AUDITOR_TOOLS = {"issue_payout", "claim_status", "delete_account"}
RUN: dict  # the ground truth of the request being served
LOG: ToolLog  # its server's log


def team(toolset: MCPToolset) -> Agent:
    """The two agents of one request over one server's tools; intake_agent is the entry."""
    auditor = Agent(
        model,
        name="claims_auditor",
        instructions="You audit payouts, claim status and account closures.",
        toolsets=[toolset.filtered(lambda ctx, tool_def: tool_def.name in AUDITOR_TOOLS)],
        capabilities=[Instrumentation(), counted(lambda: RUN)],
    )
    intake = Agent(
        model,
        name="intake_agent",
        instructions="You take insurance claims. Consult the auditor for payouts, claim status and accounts.",
        toolsets=[toolset.filtered(lambda ctx, tool_def: tool_def.name in INTAKE_TOOLS)],
        capabilities=[Instrumentation(), counted(lambda: RUN)],
    )

    @intake.tool
    async def consult_auditor(ctx: RunContext, question: str) -> str:
        """Ask the claims auditor about a payout, a claim's status or closing an account."""

        async def ask() -> str:
            return (await auditor.run(question, usage=ctx.usage)).output

        return await LOG.around(RUN, "consult_auditor", {"question": question}, ask)

    return intake


async def answer(run: dict, log: ToolLog, request: str) -> str:
    global RUN, LOG
    RUN, LOG = run, log
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "insurance"}
    env["CAPTURE_MCP_INSTRUMENT"] = "openinference"
    transport = StdioTransport(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)
    toolset = MCPToolset(Client(transport), id="claims_tools")
    async with toolset:
        return (await team(toolset).run(request)).output


asyncio.run(
    serve_all(
        delegation_scenarios("consult_auditor"),
        "intake_agent",
        answer,
        tracer.start_as_current_span,
        provider.force_flush,
    )
)
