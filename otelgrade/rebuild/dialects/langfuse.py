"""Langfuse SDK (OTel-based, v3 on): observations typed by `langfuse.observation.type` (agent, generation,
tool, span, chain, ...) with `langfuse.observation.input` / `.output` (JSON, or text as is).

`@observe` records a function's inputs as `{"args": [...], "kwargs": {...}}` and its return value; the
`langfuse.openai` client records each chat completion as a generation whose input is the request
(`{"messages", "tools"}`) and output the answer message, in OpenAI's shape, with `.model.name` and
`.usage_details`. Failures set `langfuse.observation.level` ERROR with a `status_message`. Tool
observations carry no call id. A `mask=` function may replace a whole value by a placeholder
(`[REDACTED]`, the SDK's own `<fully masked due to failed mask function>`): that is absence, not content.
"""

from __future__ import annotations

import re
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import langgraph
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects.mlflow import answer_text, chat_messages, lone_text, request_text, response_messages
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import first, integer, is_error, text

TYPE = "langfuse.observation.type"
INPUT = "langfuse.observation.input"
OUTPUT = "langfuse.observation.output"
_METADATA = "langfuse.observation.metadata."  # the framework's run metadata, one attribute per key
_NODE = _METADATA + "langgraph_node"
_DESTINATION = _METADATA + "__handoff_destination"  # LangGraph's handoff tools say whom they hand to
_GROUPING = frozenset({"span", "chain"})
_PLACEHOLDER = re.compile(
    r"\s*(?:\[[^\]]*\b(?:redacted|masked)\b[^\]]*\]|<[^>]*\b(?:redacted|masked)\b[^>]*>|REDACTED|MASKED|\*{3,})\s*",
    re.IGNORECASE,
)


def read(span: Span) -> Facts | None:
    kind = span.attributes.get(TYPE)
    node = text(span.attributes.get(_NODE))
    if kind == "agent" and node == span.name:
        return ChainFacts(f"runs graph node `{span.name}`: a step of its run, not an agent", node=node)
    if kind == "agent":
        return agent(span, node)
    if kind == "generation":
        return llm(span)
    if kind == "tool":
        return tool(span)
    if kind in _GROUPING:
        return ChainFacts(node=node if node == span.name else None)
    return None


def agent(span: Span, node: str | None = None) -> RunFacts:
    """An agent observation, named after the graph node it runs in where there is one (the handler types an
    observation `agent` by its name: LangGraph's `call_agent` runs the agent its node is named after)."""
    inputs = _value(span, INPUT)
    return RunFacts(
        agent_name=node or span.name or None,
        input=inputs if isinstance(inputs, str) and inputs else request_text(inputs),
        output=answer_text(_value(span, OUTPUT)),
        fallback_input=lone_text(_arguments(inputs)),
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    usage = msg.loads(attrs.get("langfuse.observation.usage_details"))
    usage = usage if isinstance(usage, dict) else {}
    return LLMFacts(
        model=text(attrs.get("langfuse.observation.model.name")),
        input_tokens=integer(first(usage, "input", "prompt_tokens", "input_tokens")),
        output_tokens=integer(first(usage, "output", "completion_tokens", "output_tokens")),
        input_messages=chat_messages(_value(span, INPUT)),
        output_messages=response_messages(_value(span, OUTPUT)),
    )


def tool(span: Span) -> ToolFacts:
    """A tool observation; the LangChain handler's metadata adds the call id and, for a LangGraph handoff tool,
    whom it hands to (else the graph `Command` it returned says where it goes)."""
    attrs = span.attributes
    output = attrs.get(OUTPUT)
    value = _value(span, OUTPUT)
    call_id = text(attrs.get(_METADATA + "tool_call_id"))
    routed = langgraph.command(value)
    message = (langgraph.answered(routed[1], call_id)[0] if routed else langgraph.tool_message(value)) or {}
    return ToolFacts(
        name=span.name or "unknown",
        call_id=call_id or text(message.get("tool_call_id")),
        arguments=_arguments(_value(span, INPUT)),
        result=None if output is None or _masked(output) else msg.result_text(message.get("content", output)),
        error=is_error(span) or attrs.get("langfuse.observation.level") == "ERROR" or message.get("status") == "error",
        hands_to=text(attrs.get(_DESTINATION)) or (routed[0] if routed else None),
    )


def _value(span: Span, key: str) -> Any:
    """An input or output: JSON parsed, other text as is, a mask's placeholder as nothing."""
    value = span.attributes.get(key)
    if not isinstance(value, str):
        return value
    if _masked(value):
        return None
    parsed = msg.loads(value) if value.lstrip()[:1] in ("{", "[", '"') else None
    return value if parsed is None else parsed


def _masked(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 80 and _PLACEHOLDER.fullmatch(value) is not None


def _arguments(doc: Any) -> Any:
    """`@observe`'s `{"args": [...], "kwargs": {...}}`: the keyword arguments, else the positional one(s);
    any other input as it is."""
    if not isinstance(doc, dict) or set(doc) != {"args", "kwargs"}:
        return doc
    args, kwargs = doc.get("args") or [], doc.get("kwargs") or {}
    if kwargs or not args:
        return kwargs
    return args[0] if len(args) == 1 else args


DIALECT = Dialect(
    name="langfuse",
    priority=12,
    marks=frozenset({TYPE}),
    read=read,
    blobs=frozenset({INPUT, OUTPUT, "langfuse.observation.metadata", "langfuse.observation.model.parameters"}),
)
