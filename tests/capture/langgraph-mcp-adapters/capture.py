"""A LangGraph graph of two agents whose tools are on an MCP server in another process, reached over
streamable HTTP through langchain-mcp-adapters; both sides traced.

The hotel tools run in `../hotel_mcp_server.py` (streamable HTTP on 127.0.0.1, started once by this script
and stopped by its pid), which exports its own spans (service `hotel-tools-mcp`) to the same recorder. The
agents are traced by openinference-instrumentation-langchain; OpenLLMetry's opentelemetry-instrumentation-mcp
on both sides writes the MCP client and server spans: one tool call is seen as the agent's tool span and the
MCP client's span (a child of the request's span, not of the tool's) in the request's trace, and as the
server's spans in a trace of their own (over streamable HTTP the server does not take the client's context).

The graph (`hotel_desk`, a StateGraph) starts at `front_desk` (`create_react_agent`), which hands the
conversation to `billing_desk` with its `route_to_billing` tool (a `Command` to the parent graph, LangGraph's
handoff pattern) and asks `rate_researcher`, another agent, inside its `ask_researcher` tool. The ground truth
is one request run per user request, entered at front_desk: every agent's model calls (a callback), the tool
calls in the order they ran with what the server's tools really received and returned (their log), the agent
tool's call with its answer, and the handoff (never a tool call of the request).
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

from client import Scenario, failure, text, tool
from hotel import REQUESTS
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId
from langchain_core.tools import tool as lc_tool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, create_react_agent
from langgraph.types import Command
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.mcp import McpInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk-graph"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
LangChainInstrumentor().instrument(tracer_provider=provider)
McpInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk-graph")
model = ChatOpenAI(model="gpt-4o-mini")
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
TOOL_LOG = Path(tempfile.mkstemp(prefix="hotel-tools-", suffix=".jsonl")[1])
RUN: dict  # the ground truth of the request being served
READ = 0  # lines of the tool log already placed


def drain() -> None:
    """Place the calls the server's tools ran since the last look, in the order they ran."""
    global READ
    lines = TOOL_LOG.read_text().splitlines()
    RUN["tool_calls"] += [json.loads(line) for line in lines[READ:]]
    READ = len(lines)


class ModelCalls(BaseCallbackHandler):
    def __init__(self) -> None:
        self.count = 0

    def on_chat_model_start(self, serialized, messages, **kwargs) -> None:
        self.count += 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, str]:
    """The MCP server process on a free port of 127.0.0.1, once it accepts connections."""
    port = free_port()
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(TOOL_LOG), "CAPTURE_MCP_INSTRUMENT": "traceloop"}
    process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), "streamable-http", str(port)], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the MCP server exited with {process.returncode}") from None
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError("the MCP server did not listen within 60 s")


def build(mcp_tools: dict) -> object:
    """The hotel_desk graph: front_desk (entry), billing_desk (handoff target), rate_researcher (agent tool)."""
    for mcp_tool in mcp_tools.values():
        mcp_tool.handle_tool_error = True  # a failing tool answers the model with its error, as ToolNode shows it

    researcher = create_react_agent(
        model, [mcp_tools["quote_rate"]], prompt="You research nightly hotel rates.", name="rate_researcher"
    )

    @lc_tool("ask_researcher")
    async def ask_researcher(question: str, config: RunnableConfig) -> str:
        """Ask the rate researcher about nightly hotel rates."""
        drain()
        entry = {"name": "ask_researcher", "arguments": {"question": question}, "result": None, "error": False}
        RUN["tool_calls"].append(entry)
        state = await researcher.ainvoke({"messages": [("user", question)]}, config)
        entry["result"] = state["messages"][-1].content
        return entry["result"]

    @lc_tool("route_to_billing")
    def route_to_billing(
        state: Annotated[dict, InjectedState], tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Command:
        """Hand the guest over to the billing desk (refunds, account closures)."""
        RUN["handoffs"].append({"from": "front_desk", "to": "billing_desk"})
        done = ToolMessage("Handed over to billing_desk.", tool_call_id=tool_call_id, name="route_to_billing")
        return Command(goto="billing_desk", graph=Command.PARENT, update={"messages": [*state["messages"], done]})

    front_desk = create_react_agent(
        model,
        [mcp_tools["find_rooms"], mcp_tools["reserve_room"], ask_researcher, route_to_billing],
        prompt="You are a hotel front desk. Ask the researcher for rates; route billing to the billing desk.",
        name="front_desk",
    )
    billing_desk = create_react_agent(
        model,
        [mcp_tools["refund_deposit"], mcp_tools["delete_account"]],
        prompt="You refund deposits and close guest accounts.",
        name="billing_desk",
    )
    graph = StateGraph(MessagesState)
    graph.add_node("front_desk", front_desk, destinations=("billing_desk",))
    graph.add_node("billing_desk", billing_desk)
    graph.add_edge(START, "front_desk")
    return graph.compile(name="hotel_desk")


SCENARIOS = {
    "happy": (REQUESTS["happy"][0][0], REQUESTS["happy"][1]),
    "agent_as_tool": (
        "What does a night in Lisbon cost? Then reserve LIS-204.",
        [
            tool("ask_researcher", {"question": "Nightly rate in Lisbon"}),
            tool("quote_rate", {"city": "Lisbon"}),
            text("Lisbon: 140 EUR a night."),
            tool("reserve_room", {"room_id": "LIS-204"}),
            text("A night in Lisbon is 140 EUR; LIS-204 is reserved, reference R-88123."),
        ],
    ),
    "handoff_tool_error": (
        REQUESTS["tool_error"][0][0],
        [
            tool("route_to_billing", {}),
            tool("refund_deposit", {"amount": 80}),
            text("I could not refund it: the refund window is closed."),
        ],
    ),
    "forbidden_after_handoff": (
        REQUESTS["forbidden"][0][0],
        [
            tool("route_to_billing", {}),
            tool("delete_account", {"user_id": "c-77"}),
            text("Your profile c-77 has been removed."),
        ],
    ),
    "agent_error": (
        REQUESTS["agent_error"][0][0],
        [tool("find_rooms", {"city": "Atlantis"}), failure(500, "model backend unavailable")],
    ),
}


async def serve(s: Scenario, graph, request: str) -> None:
    global RUN
    RUN = s.run("front_desk", request)
    RUN.update(handoffs=[], nested_runs_allowed=True)
    calls = ModelCalls()
    try:
        state = await graph.ainvoke({"messages": [("user", request)]}, {"callbacks": [calls]})
        output, status = state["messages"][-1].content, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    drain()
    s.finish(output, status, calls.count)


async def main() -> None:
    process, url = start_server()
    try:
        client = MultiServerMCPClient({"hotel": {"url": url, "transport": "streamable_http"}})
        for name, (request, replies) in SCENARIOS.items():
            with Scenario(name, replies, nested_runs_allowed=True) as s:
                with tracer.start_as_current_span("handle_request"):
                    mcp_tools = {t.name: t for t in await client.get_tools()}
                    await serve(s, build(mcp_tools), request)
                provider.force_flush()
    finally:
        process.terminate()
        process.wait(timeout=30)
        TOOL_LOG.unlink()


asyncio.run(main())
