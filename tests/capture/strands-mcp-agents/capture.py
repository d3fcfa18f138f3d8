"""Strands Agents with their tools on an MCP server in another process and an agent called as a tool, with Strands' own
telemetry (StrandsTelemetry + OTLP/HTTP exporter).

The insurance-claims tools run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=insurance, over stdio, started for
each scenario by Strands' `MCPClient`); that process exports its own spans (service `insurance-tools-mcp`) to the
same recorder, and Strands' MCP client carries the trace context in each request. `claims_lead` files claims with
the server's lookup_policy, file_claim and premium_quote, and asks `claims_auditor`, a second agent invoked inside
its `consult_auditor` tool, about payouts, claim status and account closures (the server's issue_payout,
claim_status and delete_account). The OpenAI model provider streams chat completions from the scripted model at
OPENAI_BASE_URL. Message content is on by default. Each request is wrapped in a `handle_request` span from a tracer
of the same provider.

The ground truth is one request run per user request, entered at claims_lead, recorded the way an agent called as a
tool is: every agent's model calls (each agent's BeforeModelCallEvent hook), the tool calls in the order they
started, with what the server's tools really received and returned (their log), the agent tool with the question it
got and the auditor's answer, and the answer the user got. The auditor's own run is nested.
"""

import asyncio
import os
import sys
from pathlib import Path

from insurance import delegation_scenarios
from mcp import StdioServerParameters, stdio_client
from mcp_tool_log import ToolLog, serve_all
from opentelemetry import trace
from strands import Agent
from strands import tool as strands_tool
from strands.hooks import BeforeModelCallEvent
from strands.models.openai import OpenAIModel
from strands.telemetry import StrandsTelemetry
from strands.tools.mcp import MCPClient

os.environ.setdefault("OTEL_SERVICE_NAME", "claims-lead")  # read by StrandsTelemetry's resource
telemetry = StrandsTelemetry().setup_otlp_exporter()  # OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
tracer = trace.get_tracer("claims-lead")
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
LEAD_TOOLS = {"lookup_policy", "file_claim", "premium_quote"}
AUDITOR_TOOLS = {"issue_payout", "claim_status", "delete_account"}
RUN: dict  # the ground truth of the request being served
LOG: ToolLog  # its server's log


def model() -> OpenAIModel:
    client_args = {"base_url": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]}
    return OpenAIModel(client_args=client_args, model_id="gpt-4o-mini")


def make_agent(name: str, prompt: str, agent_tools: list) -> Agent:
    agent = Agent(name=name, model=model(), system_prompt=prompt, tools=agent_tools, callback_handler=None)

    def count(event: BeforeModelCallEvent) -> None:  # the agent's own hook, not the spans
        RUN["llm_calls"] += 1

    agent.hooks.add_callback(BeforeModelCallEvent, count)
    return agent


def team(server_tools: list) -> Agent:
    """A new pair of agents for each request (Strands agents keep their conversation); claims_lead is the entry."""
    auditor = make_agent(
        "claims_auditor",
        "You audit payouts, claim status and account closures.",
        [t for t in server_tools if t.tool_name in AUDITOR_TOOLS],
    )

    @strands_tool
    async def consult_auditor(question: str) -> str:
        """Ask the claims auditor about a payout, a claim's status or closing an account."""

        async def ask() -> str:
            return str(await auditor.invoke_async(question)).strip()

        return await LOG.around(RUN, "consult_auditor", {"question": question}, ask)

    return make_agent(
        "claims_lead",
        "You take insurance claims. Consult the auditor for payouts, claim status and accounts.",
        [*(t for t in server_tools if t.tool_name in LEAD_TOOLS), consult_auditor],
    )


async def answer(run: dict, log: ToolLog, request: str) -> str:
    global RUN, LOG
    RUN, LOG = run, log
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "insurance"}
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)
    with MCPClient(lambda: stdio_client(params)) as server:
        return str(await team(server.list_tools_sync()).invoke_async(request)).strip()


asyncio.run(
    serve_all(
        delegation_scenarios("consult_auditor"),
        "claims_lead",
        answer,
        tracer.start_as_current_span,
        telemetry.tracer_provider.force_flush,
    )
)
