"""Vercel AI SDK's own `ai.*` attributes (the telemetry of its earlier majors, still offered).

`ai.generateText` / `ai.streamText` (the run: `ai.telemetry.functionId`, `ai.prompt`,
`ai.response.text`) > `ai.generateText.doGenerate` / `ai.streamText.doStream` (one model call:
`ai.prompt.messages`, `ai.response.text`, `ai.response.toolCalls`, `ai.usage.*`) and `ai.toolCall`
(`ai.toolCall.name/id/args/result`). Vercel's GenAI-convention spans are read by `genai.py`.
"""

from __future__ import annotations

from typing import Any

from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.facts import LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.fields import first, integer, is_error, text
from otelgrade.spans import Span

NAME = "vercel-ai"

_RUNS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
_CALLS = (".doGenerate", ".doStream")


def read(span: Span) -> RunFacts | LLMFacts | ToolFacts | None:
    op = span.attributes.get("ai.operationId")
    if op is None and (span.name or "").startswith("ai."):
        op = span.name
    if not isinstance(op, str):
        return None
    if op in _RUNS:
        return agent(span)
    if op.endswith(_CALLS):
        return llm(span)
    if op == "ai.toolCall":
        return tool(span)
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    output = text(attrs.get("ai.response.text")) or text(attrs.get("ai.response.object"))
    return RunFacts(
        agent_name=text(first(attrs, "ai.telemetry.functionId", "resource.name")),
        input=msg.last_user_text(msg.vercel_prompt(attrs.get("ai.prompt"))),
        output=output,
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    inputs = msg.from_vercel(msg.as_list(attrs.get("ai.prompt.messages")))
    calls = [
        msg.tool_call(c.get("toolCallId"), c.get("toolName"), c.get("input", c.get("args")))
        for c in msg.as_list(attrs.get("ai.response.toolCalls"))
        if isinstance(c, dict)
    ]
    content = text(attrs.get("ai.response.text"))
    outputs = [msg.message("assistant", content, calls)] if content or calls else []
    return LLMFacts(
        model=text(first(attrs, "ai.response.model", "ai.model.id", "gen_ai.request.model")),
        provider=text(first(attrs, "ai.model.provider", "gen_ai.system")),
        input_tokens=integer(
            first(attrs, "ai.usage.inputTokens", "ai.usage.promptTokens", "gen_ai.usage.input_tokens")
        ),
        output_tokens=integer(
            first(attrs, "ai.usage.outputTokens", "ai.usage.completionTokens", "gen_ai.usage.output_tokens")
        ),
        input_messages=inputs,
        output_messages=outputs,
        finish_reason=text(attrs.get("ai.response.finishReason")),
    )


def tool(span: Span) -> ToolFacts:
    attrs = span.attributes
    result: Any = first(attrs, "ai.toolCall.result", "ai.toolCall.output")
    return ToolFacts(
        name=text(attrs.get("ai.toolCall.name")) or "unknown",
        call_id=text(attrs.get("ai.toolCall.id")),
        arguments=msg.parse_json_maybe(first(attrs, "ai.toolCall.args", "ai.toolCall.input")),
        result=msg.result_text(result),
        error=is_error(span),
    )
