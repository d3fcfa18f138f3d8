"""An Agno `Agent` whose tools are on an MCP server in another process (`MCPTools` over stdio), traced by
OpenLLMetry: Traceloop's opentelemetry-instrumentation-agno for the agent and tool spans, its
opentelemetry-instrumentation-openai for the model calls; the MCP SDK (mcp 2.x) writes its own client spans here and
server spans in the server's own service (`grid-tools-mcp`), carrying the trace context across. (OpenLLMetry's
opentelemetry-instrumentation-mcp 0.62.4 wraps `streamablehttp_client`, which mcp 2.x no longer has, and fails to
instrument; agno 3.1.10's MCPTools needs fastmcp 4, which needs mcp 2.)

The energy utility's tools (`../grid.py`) run in `../hotel_mcp_server.py` (CAPTURE_MCP_TOOLS=grid, FastMCP over
stdio), started for each request by `MCPTools`. `grid_desk` is one agent with those tools; the model is
`OpenAIChat(base_url=...)` with the client's retries off, so one model call is one request to the scripted model.

The ground truth is one run per request, `grid_desk`'s: the user's request, the answer the agent returned, its model
calls (its assistant messages, plus the call that failed), the calls the server's tools really ran (their log), and
whether the run failed (Agno reports a failed model call as a run of status ERROR, not as an exception).

Run as ../agno-mcp-traceloop-nocontent/capture.py (LACKS set, TRACELOOP_TRACE_CONTENT=false), the same requests
are traced with OpenLLMetry's content off, and every run's ground truth lists in `lacks` what the trace cannot carry.
"""

import asyncio
import os
import shlex
import sys
from pathlib import Path

os.environ.setdefault("AGNO_TELEMETRY", "false")  # no anonymous usage pings

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.tools.mcp import MCPTools
from grid import REQUESTS
from mcp_tool_log import ToolLog, serve_all
from telemetry import flush, traced


def openllmetry() -> list:
    from opentelemetry.instrumentation.agno import AgnoInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return [AgnoInstrumentor(), OpenAIInstrumentor()]


tracer = traced("energy-account-desk", openllmetry)
SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "hotel_mcp_server.py"
LACKS = globals().get("LACKS")  # set by the content-off capture: what its trace cannot carry


async def answer(run: dict, log: ToolLog, request: str) -> str:
    if LACKS:
        run["lacks"] = sorted(LACKS)
    env = {**os.environ, "CAPTURE_TOOL_LOG": str(log.path), "CAPTURE_MCP_TOOLS": "grid"}
    command = shlex.join([sys.executable, str(SERVER_SCRIPT), "stdio"])
    async with MCPTools(command=command, env=env, transport="stdio") as grid_tools:
        agent = Agent(
            id="grid_desk",
            name="grid_desk",
            instructions="You are an energy utility's account desk: meters, faults, credits, tariffs and accounts.",
            model=OpenAIChat(id="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0),
            tools=[grid_tools],
            telemetry=False,
        )
        result = await agent.arun(request)
    run["llm_calls"] += sum(1 for m in result.messages or [] if m.role == "assistant")
    print(f"   agent status {result.status.value}, content {result.content!r}")
    if result.status.value == "ERROR":
        run["llm_calls"] += 1  # the model call that failed
        run["note"] = f"Agno reported the failed model call as status ERROR with content {result.content!r}."
        raise RuntimeError(str(result.content))
    return str(result.content)


asyncio.run(serve_all(REQUESTS, "grid_desk", answer, tracer.start_as_current_span, flush))
