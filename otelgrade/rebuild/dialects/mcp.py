"""Model Context Protocol spans (the MCP semantic conventions): a `tools/call <tool>` span, on the client and on
the server, is one execution of the tool (`gen_ai.tool.name`, else `mcp.tool.name`, else the word after
`tools/call` in its name: the MCP Python SDK's client names its span `MCP send tools/call <tool>`), failed when its
status says so or when the tool reported the failure (`error.type` `tool_error`, or `mcp.tool.result.is_error`: a
`CallToolResult` with `isError`). Other methods (`initialize`, `tools/list`, `server/discover`, notifications) are
the protocol's own work, no call of the agent's, whatever context attributes (`gen_ai.agent.name`) the client
copied onto them.

Asked before generic GenAI, which would read the same span's `execute_tool` without these failure marks; the
framework's tool span above it and the server's below are the same call (`witnesses.one_per_call`).
"""

from __future__ import annotations

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import ChainFacts, Facts, ToolFacts
from otelgrade.rebuild.span_readers import first, is_error, text
from otelgrade.rebuild.tool_errors import says_failed

_METHOD = "mcp.method.name"
TOOLS_CALL = "tools/call"
_NAMED = TOOLS_CALL + " "  # the span name, where an instrumentation leaves the method attribute out


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    method = attrs.get(_METHOD)
    if method is not None and method != TOOLS_CALL:
        return ChainFacts(f"the MCP protocol's own `{method}`: no call of the agent's")
    if method is None and not span.name.startswith(_NAMED):
        return None
    name = text(first(attrs, "gen_ai.tool.name", "mcp.tool.name")) or _named(span.name)
    if not name:
        return None
    result = msg.result_text(first(attrs, "gen_ai.tool.call.result", "mcp.tool.result.content"))
    reported = attrs.get("error.type") == "tool_error" or attrs.get("mcp.tool.result.is_error") is True
    return ToolFacts(
        name=name,
        call_id=text(attrs.get("gen_ai.tool.call.id")),
        arguments=msg.parse_json_maybe(attrs.get("gen_ai.tool.call.arguments")),
        result=result,
        error=is_error(span) or reported or says_failed(result),
    )


def _named(span_name: str) -> str | None:
    """The tool a `tools/call` span's name names: its last word, after the method (`MCP send tools/call X`)."""
    _, method, tool = span_name.rpartition(_NAMED)
    return tool.strip() or None if method else None


DIALECT = Dialect(name="mcp", priority=95, marks=frozenset({_METHOD}), name_prefixes=(_NAMED,), read=read)
