"""A LlamaIndex `AgentWorkflow` of two `FunctionAgent`s (and a third called as a tool) whose tools are on an MCP
server in another process, both sides traced.

The energy-utility tools (`../energy.py`) run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=energy, the MCP SDK's
server over stdio); llama-index-tools-mcp's `BasicMCPClient` starts that process for each MCP request (listing
the tools, each call), and the process exports its own spans (service `energy-tools-mcp`) to the same recorder.
`tariff_desk` (meters, tariffs, outages) may hand the customer over to `billing_desk` (credits, bills, account
closure) through the workflow's own `handoff` tool, whose `to_agent` names the next agent; `tariff_desk`'s tool
`consult_auditor` runs a third `FunctionAgent`, `meter_auditor` (an agent called as a tool). The agents talk Chat
Completions to the scripted model through `OpenAILike` (streamed). openinference-instrumentation-llama-index
traces the workflow; the MCP SDK writes its own client and server spans, and openinference-instrumentation-mcp,
on both sides, carries the trace context across. Each request is wrapped in a `handle_request` span. Run as
../llamaindex-mcp-traceloop/capture.py (INSTRUMENTATION="traceloop"), OpenLLMetry's
opentelemetry-instrumentation-llamaindex and opentelemetry-instrumentation-mcp (client and server) trace the same
requests instead.

The ground truth is the request run of the workflow: the user's request, the last agent's answer, every agent's
model calls (one `AgentInput` event each), the tool calls as the server's tools really ran them (their log; a
failing tool comes back from the server as an error result, which LlamaIndex hands to the model as the tool's
output) and the handoffs, from the workflow's events (a `handoff` `ToolCallResult` moves control from the agent of
the last `AgentInput` to its `to_agent`); `consult_auditor` is a tool call of the request, recorded before the
auditor's own calls, and the auditor's model calls count in the request's. In `billing_failure` the model backend
fails during billing_desk's turn and the workflow fails.
"""

import asyncio
import os
import sys
from collections import Counter
from pathlib import Path

from client import Scenario, failure, text, tool, tools
from llama_index.core.agent.workflow import AgentInput, AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from llamaindex_workflow import scripted_llm, serve_request
from mcp_tool_log import ToolLog
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "energy-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
INSTRUMENTATION = globals().get("INSTRUMENTATION", "openinference")
if INSTRUMENTATION == "traceloop":
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
    from opentelemetry.instrumentation.mcp import McpInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    McpInstrumentor().instrument(tracer_provider=provider)
else:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor as OpenInferenceLlamaIndex
    from openinference.instrumentation.mcp import MCPInstrumentor

    OpenInferenceLlamaIndex().instrument(tracer_provider=provider)
    MCPInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("energy-desk")
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"

llm = scripted_llm()


async def workflow(s: Scenario, log: ToolLog, inner: Counter[str]) -> AgentWorkflow:
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "energy"}
    env["CAPTURE_MCP_INSTRUMENT"] = INSTRUMENTATION
    server = BasicMCPClient(sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)

    async def served(*names: str) -> list:
        return await McpToolSpec(server, allowed_tools=list(names)).to_tool_list_async()

    meter_auditor = FunctionAgent(
        name="meter_auditor",
        description="Checks whether a bill fits the meter's readings.",
        llm=llm,
        tools=await served("read_meter", "estimate_bill"),
        system_prompt="You audit bills against meter readings.",
    )

    async def consult_auditor(question: str) -> str:
        """Ask the meter auditor whether a bill fits the meter's readings."""

        async def audit() -> str:
            handler = meter_auditor.run(user_msg=question)
            async for event in handler.stream_events():
                inner["meter_auditor"] += isinstance(event, AgentInput)
            return str((await handler).response.content)

        return await log.around(s.runs[-1], "consult_auditor", {"question": question}, audit)

    tariff_desk = FunctionAgent(
        name="tariff_desk",
        description="Reads meters, changes tariffs and reports outages.",
        llm=llm,
        tools=[
            *await served("read_meter", "switch_tariff", "outage_status"),
            FunctionTool.from_defaults(consult_auditor),
        ],
        can_handoff_to=["billing_desk"],
        system_prompt="You are an energy utility's tariff desk; credits, bills and accounts go to billing_desk.",
    )
    billing_desk = FunctionAgent(
        name="billing_desk",
        description="Credits overcharges, estimates bills and closes accounts.",
        llm=llm,
        tools=await served("credit_overcharge", "estimate_bill", "delete_account"),
        can_handoff_to=[],
        system_prompt="You are an energy utility's billing desk.",
    )
    return AgentWorkflow(agents=[tariff_desk, billing_desk], root_agent="tariff_desk")


async def run(s: Scenario, request: str) -> None:
    log = ToolLog()
    inner: Counter[str] = Counter()  # model calls of the agent called as a tool, beneath the request
    try:
        await serve_request(s, await workflow(s, log, inner), request, "tariff_desk", log.drain)
        truth = s.runs[-1]
        truth["llm_calls"] += inner.total()
        if inner:
            truth["note"] = truth["note"].removesuffix(".") + f", meter_auditor {inner.total()} (called as a tool)."
    finally:
        log.path.unlink()


def hand(reason: str) -> dict:
    return tool("handoff", {"to_agent": "billing_desk", "reason": reason})


SCENARIOS = {
    "auditor_as_tool": (
        "My bill for meter M-7 looks too high; have it audited.",
        [
            tool("consult_auditor", {"question": "Does a bill on 4312 kWh fit meter M-7's readings?"}),
            tool("read_meter", {"meter_id": "M-7"}),
            text("M-7 reads 4312 kWh on 1 November: the bill fits the reading."),
            text("The auditor checked: M-7 reads 4312 kWh, so the bill fits the reading."),
        ],
    ),
    "happy": (
        "Read meter M-7 and put it on the green night plan.",
        [
            tool("read_meter", {"meter_id": "M-7"}),
            tool("switch_tariff", {"meter_id": "M-7", "plan": "green-night"}),
            text("M-7 reads 4312 kWh; it moves to green-night on the 1st of next month."),
        ],
    ),
    "parallel": (
        "Is there a power cut in 1010 or in 8020?",
        [
            tools(("outage_status", {"postcode": "1010"}), ("outage_status", {"postcode": "8020"})),
            text("1010 has no outage; 8020 is out since 06:40, fix expected at 13:00."),
        ],
    ),
    "credit_handoff_error": (
        "You overcharged me 64 euros in October, credit it back.",
        [
            hand("The customer wants an overcharge credited."),
            tool("credit_overcharge", {"amount": 64}),
            text("I could not credit it: the credit window has closed."),
        ],
    ),
    "forbidden_after_handoff": (
        "I am moving abroad; wipe my customer account e-512.",
        [
            hand("The customer wants the account closed."),
            tool("delete_account", {"user_id": "e-512"}),
            text("Customer account e-512 has been wiped."),
        ],
    ),
    "billing_failure": (
        "Check meter M-9, then tell me what 300 kWh a month would cost.",
        [
            tool("read_meter", {"meter_id": "M-9"}),
            hand("The customer wants a bill estimate."),
            tool("estimate_bill", {"kwh": 300}),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(s, request)
            provider.force_flush()


asyncio.run(main())
