"""A smolagents `ToolCallingAgent` whose tools are on an MCP server in another process, both sides traced.

The insurance-claims tools run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=insurance, over stdio, started for
each request by smolagents' `ToolCollection.from_mcp`, on mcpadapt); that process exports its own spans (service
`insurance-tools-mcp`) to the same recorder. The agent is traced by openinference-instrumentation-smolagents;
the MCP SDK writes its own client and server spans, and openinference-instrumentation-mcp, on both sides,
carries the trace context across. `claims_helper` (on `OpenAIServerModel`, Chat Completions) answers through
smolagents' own `final_answer` tool (its argument is the answer, not a tool call). Each request is wrapped in a
`handle_request` span.

The ground truth is one request run per user request: the user's request, the agent's answer, its model calls
(one per action step in its memory, planning off) and the tool calls, with what the server's tools really
received and returned (their log). A failing tool comes back from the server as an error result.
"""

import asyncio
import os
import sys
from pathlib import Path

from client import tool
from insurance import REQUESTS
from mcp import StdioServerParameters
from mcp_tool_log import ToolLog, serve_all
from openinference.instrumentation.mcp import MCPInstrumentor
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from smolagents import ActionStep, OpenAIServerModel, ToolCallingAgent, ToolCollection

provider = TracerProvider(resource=Resource.create({"service.name": "claims-helper"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
SmolagentsInstrumentor().instrument(tracer_provider=provider)
MCPInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("claims-helper")
model = OpenAIServerModel(
    model_id="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
)
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"


def final(answer: str) -> dict:
    return tool("final_answer", {"answer": answer})


def answered(name: str) -> tuple[str, list[dict]]:
    """A request of `insurance.py`, its last reply given through the final_answer tool."""
    (request, *_), replies = REQUESTS[name]
    return request, [*replies[:-1], final(replies[-1]["text"])] if "text" in replies[-1] else replies


SCENARIOS = {name: answered(name) for name in ("happy", "forbidden", "tool_error", "parallel", "agent_error")}


async def answer(run: dict, log: ToolLog, request: str) -> str:
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "insurance"}
    env["CAPTURE_MCP_INSTRUMENT"] = "openinference"
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=env)
    with ToolCollection.from_mcp(params, trust_remote_code=True) as server:
        agent = ToolCallingAgent(tools=server.tools, model=model, name="claims_helper", verbosity_level=0)
        try:
            return str(agent.run(request))
        finally:
            run["llm_calls"] = sum(isinstance(step, ActionStep) for step in agent.memory.steps)


asyncio.run(serve_all(SCENARIOS, "claims_helper", answer, tracer.start_as_current_span, provider.force_flush))
