"""OpenLLMetry / Traceloop: `traceloop.span.kind` workflow/agent/tool spans and LLM spans.

Older releases flatten messages into `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` (tool calls
as `...tool_calls.M.{id,name,arguments}`); current ones write GenAI JSON messages, read by
`genai.py`. Tool spans record `traceloop.entity.input` (`{"args": [...], "kwargs": {...}}`) and
`traceloop.entity.output` (JSON), and no call id.
"""

from __future__ import annotations

import re
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import FINISH_REASON_KEYS, finish_reason, first, has_any, integer, is_error, text

# Flattened messages always start at index 0, so these keys tell the format without scanning every key.
_FLAT_FIRST = tuple(f"gen_ai.{side}.0.{field}" for side in ("prompt", "completion") for field in ("role", "content"))
_FLAT = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    kind = attrs.get("traceloop.span.kind")
    if kind in ("agent", "workflow"):
        return agent(span)
    if kind == "tool":
        return tool(span)
    if kind == "handoff":  # the openai-agents instrumentation's handoff span (`concierge → unknown.handoff`)
        return genai.handoff(span)
    if _is_llm(attrs):
        if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
            return genai.llm(span)
        return llm(span)
    return None


def _is_llm(attrs: dict[str, Any]) -> bool:
    return "llm.request.type" in attrs or has_any(attrs, _FLAT_FIRST)


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    name = text(first(attrs, "gen_ai.agent.name", "traceloop.entity.name", "traceloop.workflow.name"))
    output = msg.loads(attrs.get("traceloop.entity.output"))
    return RunFacts(
        agent_name=name or span.name.removesuffix(".agent").removesuffix(".workflow") or None,
        fallback_input=_entity_input_text(attrs.get("traceloop.entity.input")),
        output=output if isinstance(output, str) and output else None,
    )


def tool(span: Span) -> ToolFacts:
    """A tool span: arguments and result as `traceloop.entity.*`, else (the openai-agents instrumentation) as
    GenAI's `gen_ai.tool.call.arguments` / `.result`."""
    attrs = span.attributes
    output = first(attrs, "traceloop.entity.output", "gen_ai.tool.call.result")
    entity_input = attrs.get("traceloop.entity.input")
    return ToolFacts(
        name=text(first(attrs, "gen_ai.tool.name", "traceloop.entity.name")) or span.name.removesuffix(".tool"),
        call_id=text(attrs.get("gen_ai.tool.call.id")),
        arguments=_entity_arguments(entity_input)
        if entity_input is not None
        else msg.parse_json_maybe(attrs.get("gen_ai.tool.call.arguments")),
        result=msg.result_text(output) if output is not None else None,
        error=is_error(span),
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    prompts: dict[int, dict[str, Any]] = {}
    completions: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        match = _FLAT.match(key)
        if match:
            side = prompts if match.group(1) == "prompt" else completions
            side.setdefault(int(match.group(2)), {})[match.group(3)] = value
    outputs = _flat_messages(completions)
    finish = finish_reason(first(attrs, *FINISH_REASON_KEYS))
    finish = finish or next((text(c.get("finish_reason")) for _, c in sorted(completions.items())), None)
    return LLMFacts(
        model=text(first(attrs, "gen_ai.response.model", "gen_ai.request.model")),
        provider=text(first(attrs, "gen_ai.provider.name", "gen_ai.system")),
        input_tokens=integer(first(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
        output_tokens=integer(first(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")),
        input_messages=_flat_messages(prompts),
        output_messages=outputs,
        finish_reason=finish,
    )


def _flat_messages(items: dict[int, dict[str, Any]]) -> list[msg.Message]:
    out = []
    for _, fields in sorted(items.items()):
        calls: dict[int, dict[str, Any]] = {}
        for key, value in fields.items():
            if key.startswith("tool_calls."):
                index, _, field = key[len("tool_calls.") :].partition(".")
                if index.isdigit():
                    calls.setdefault(int(index), {})[field] = value
        tool_calls = [msg.tool_call(c.get("id"), c.get("name"), c.get("arguments")) for _, c in sorted(calls.items())]
        role = text(fields.get("role")) or "assistant"
        extra = {"tool_call_id": text(fields.get("tool_call_id"))} if role == "tool" else {}
        content = fields.get("content")
        if isinstance(content, str) and content.lstrip()[:2] == "[{":
            content = content_text(msg.loads(content)) or content
        out.append(msg.message(role, content_text(content) or None, tool_calls, **extra))
    return out


def _entity_arguments(value: Any) -> Any:
    """`{"args": [...], "kwargs": {...}}` -> the keyword arguments (or the positional ones)."""
    doc = msg.loads(value)
    if not isinstance(doc, dict) or not ({"args", "kwargs"} & doc.keys()):
        return msg.parse_json_maybe(value)
    args, kwargs = doc.get("args") or [], doc.get("kwargs") or {}
    if kwargs or not args:
        return kwargs
    return args[0] if len(args) == 1 else args


def _entity_input_text(value: Any) -> str | None:
    arguments = _entity_arguments(value)
    while isinstance(arguments, list) and len(arguments) == 1:
        arguments = arguments[0]
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict):
        strings = [v for v in arguments.values() if isinstance(v, str)]
        return strings[0] if len(strings) == 1 else None
    return None


DIALECT = Dialect(
    name="traceloop",
    priority=40,
    marks=frozenset({"traceloop.span.kind", "llm.request.type", *_FLAT_FIRST}),
    read=read,
    blob_prefixes=("gen_ai.prompt.", "gen_ai.completion."),
    transfer_names=(r"transfer_(back_)?to_",),  # LangGraph's supervisor and swarm handoff tools
)
