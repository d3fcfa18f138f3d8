"""The requests of ../llamaindex-mcp-openinference/capture.py (a LlamaIndex `AgentWorkflow` handing off, an agent
called as a tool, every tool on an MCP server in another process) traced by OpenLLMetry instead:
opentelemetry-instrumentation-llamaindex on the workflow and opentelemetry-instrumentation-mcp on the MCP client and
the server (mcp 1.x here: OpenLLMetry's MCP instrumentation does not load on 2.x, and llama-index-tools-mcp 0.4.8
is the last on 1.x)."""

from client import run_capture

run_capture("llamaindex-mcp-openinference", INSTRUMENTATION="traceloop")
