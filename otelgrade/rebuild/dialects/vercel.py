"""Vercel AI SDK's own `ai.*` attributes (the telemetry of its earlier majors, still offered).

`ai.generateText` / `ai.streamText` (the run: `ai.telemetry.functionId`, `ai.prompt`,
`ai.response.text`) > `ai.generateText.doGenerate` / `ai.streamText.doStream` (one model call:
`ai.prompt.messages`, `ai.response.text`, `ai.response.toolCalls`, `ai.usage.*`) and `ai.toolCall`
(`ai.toolCall.name/id/args/result`). Vercel's prompt messages are converted here; its
GenAI-convention spans are read by `genai.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import first, integer, is_error, text

_RUNS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
_CALLS = (".doGenerate", ".doStream")


def _operation(span: Span) -> str | None:
    op = span.attributes.get("ai.operationId")
    if op is None and (span.name or "").startswith("ai."):
        op = span.name
    return op if isinstance(op, str) else None


def read(span: Span) -> Facts | None:
    op = _operation(span)
    if op is None:
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
        input=msg.last_user_text(vercel_prompt(attrs.get("ai.prompt"))),
        output=output,
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    inputs = from_vercel(msg.as_list(attrs.get("ai.prompt.messages")))
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


# --- Vercel AI SDK prompt messages --------------------------------------------------------


def from_vercel(messages: Iterable[Any]) -> list[msg.Message]:
    """Vercel AI SDK messages: content string or parts (text, tool-call, tool-result)."""
    out: list[msg.Message] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        role = str(raw.get("role") or "assistant")
        content = raw.get("content")
        if not isinstance(content, list):
            out.append(msg.message(role, content_text(content) or None))
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[msg.Message] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "tool-call":
                calls.append(
                    msg.tool_call(part.get("toolCallId"), part.get("toolName"), part.get("input", part.get("args")))
                )
            elif kind == "tool-result":
                output = part.get("output", part.get("result"))
                if isinstance(output, dict) and "value" in output:
                    output = output["value"]
                results.append(
                    msg.message(
                        "tool",
                        msg.result_text(output),
                        tool_call_id=text(part.get("toolCallId")),
                        name=part.get("toolName"),
                    )
                )
        out.extend(msg.with_results(role, texts, calls, results))
    return out


def vercel_prompt(prompt: Any) -> list[msg.Message]:
    """`ai.prompt` ({system, prompt | messages}) as messages."""
    doc = msg.loads(prompt)
    if not isinstance(doc, dict):
        return []
    out: list[msg.Message] = []
    if isinstance(doc.get("system"), str):
        out.append(msg.message("system", doc["system"]))
    if isinstance(doc.get("prompt"), str):
        out.append(msg.message("user", doc["prompt"]))
    elif isinstance(doc.get("messages"), list):
        out.extend(from_vercel(doc["messages"]))
    return out


DIALECT = Dialect(
    name="vercel-ai",
    priority=20,
    marks=frozenset({"ai.operationId"}),
    name_prefixes=("ai.",),
    read=read,
    blobs=frozenset({"ai.prompt", "ai.prompt.messages", "ai.prompt.tools"}),
)
