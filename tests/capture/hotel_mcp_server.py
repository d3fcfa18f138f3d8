"""The hotel tools (`hotel.py`) on an MCP server of their own process, for the MCP capture scripts; with
CAPTURE_MCP_TOOLS=insurance the insurance-claims tools (`insurance.py`) instead, as service `insurance-tools-mcp`.

    python hotel_mcp_server.py stdio
    python hotel_mcp_server.py streamable-http PORT      # on 127.0.0.1

The server is the standalone FastMCP package's where that is installed, else the MCP SDK's (`MCPServer` in mcp
2.x, `FastMCP` in 1.x). It exports its own spans (service.name `hotel-tools-mcp`) to OTEL_EXPORTER_OTLP_ENDPOINT,
the recorder of the client's capture: with mcp 2.x the SDK's own server spans, and with
CAPTURE_MCP_INSTRUMENT=traceloop those of OpenLLMetry's opentelemetry-instrumentation-mcp (with
CAPTURE_MCP_INSTRUMENT=openinference, openinference-instrumentation-mcp's context propagation). Each call a tool
really ran is appended, as one JSON line {name, arguments, result, error}, to the file CAPTURE_TOOL_LOG: the client
side's ground truth of what the tools received and returned.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

TOOLS = os.environ.get("CAPTURE_MCP_TOOLS", "hotel")
FUNCTIONS: dict[str, Callable[..., str]] = importlib.import_module(TOOLS).FUNCTIONS
provider = TracerProvider(resource=Resource.create({"service.name": f"{TOOLS}-tools-mcp"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
if os.environ.get("CAPTURE_MCP_INSTRUMENT") == "traceloop":
    from opentelemetry.instrumentation.mcp import McpInstrumentor

    McpInstrumentor().instrument(tracer_provider=provider)
elif os.environ.get("CAPTURE_MCP_INSTRUMENT") == "openinference":
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)

try:  # the standalone FastMCP package, where installed
    from fastmcp import FastMCP as Server
except ImportError:
    try:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer as Server
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as Server


def recorded(function: Callable[..., str]) -> Callable[..., str]:
    """The tool, appending what it received and returned (or that it failed) to the ground-truth log."""

    @functools.wraps(function)
    def tool(**arguments: Any) -> str:
        entry: dict[str, Any] = {"name": function.__name__, "arguments": arguments, "result": None, "error": False}
        try:
            entry["result"] = function(**arguments)
        except RuntimeError:
            entry["error"] = True
            raise
        finally:
            with open(os.environ["CAPTURE_TOOL_LOG"], "a") as log:
                log.write(json.dumps(entry) + "\n")
        return entry["result"]

    tool.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    return tool


def main() -> None:
    transport = sys.argv[1]
    options: dict[str, Any] = {}
    if transport != "stdio":
        options = {"host": "127.0.0.1", "port": int(sys.argv[2])}
    options_at_run = not Server.__module__.startswith("mcp.server.fastmcp")  # mcp 1.x takes them at init
    server = Server(f"{TOOLS}-tools", **({} if options_at_run else options))
    for function in FUNCTIONS.values():
        server.tool()(recorded(function))
    try:
        server.run(transport, **(options if options_at_run else {}))
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()
