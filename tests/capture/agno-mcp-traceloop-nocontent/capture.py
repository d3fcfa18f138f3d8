"""The Agno MCPTools requests of ../agno-mcp-traceloop with OpenLLMetry's content off (TRACELOOP_TRACE_CONTENT=false):
that folder's capture.py run with LACKS set.

With content off the model spans keep their finish reasons and token counts but no messages, the agent span names
the agent but not the request or the answer, and the agent's tool spans name the tool without its arguments or
result; the MCP SDK's and FastMCP's spans (which ignore the switch) name each call and mark the failed one, without
arguments or results either. So every run's tool calls can be told apart and counted, and their failures seen, but
not what they received or returned: the ground truth lists `input`, `output`, `messages`, `tool_arguments` and
`tool_results` in `lacks`.
"""

import os

from client import run_capture

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"
run_capture("agno-mcp-traceloop", LACKS=["input", "messages", "output", "tool_arguments", "tool_results"])
