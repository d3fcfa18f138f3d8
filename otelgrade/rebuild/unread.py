"""Spans that carry an AI instrumentation's marks but that no dialect read.

A model call, tool execution or agent span otelgrade did not understand may hold exactly what a grader looks
for (a forbidden call, the answer): a run holding one lacks what such a span would carry, so graders that read
it answer `skipped` instead of a verdict from what was not read. The marks are the conventions' own keys
(GenAI, OpenInference, Traceloop, Vercel) and the vendor namespaces of SDKs that trace LLM applications.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import PARTS, Part, Unread

_MODEL_KEYS = frozenset(
    {
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.model_name",
        "llm.token_count.prompt",
        "ai.model.id",
        "langfuse.observation.model.name",
    }
)
_TOOL_KEYS = frozenset({"gen_ai.tool.name", "tool.name", "ai.toolCall.name", "gen_ai.tool.call.id"})
_AGENT_KEYS = frozenset({"gen_ai.agent.name", "agent.name"})
# Span kinds written by an instrumentation whose spans hold no call of the agent (retrieval, embeddings, ...).
_KIND_KEYS = ("openinference.span.kind", "gen_ai.operation.name", "mlflow.spanType", "langfuse.observation.type")
_NOT_CALLS = frozenset(
    {
        "retriever",
        "embedding",
        "embeddings",
        "reranker",
        "guardrail",
        "evaluator",
        "prompt",
        "parser",
        "retrieval",
        "event",
        "span",
        "chain",
        "create_agent",
        "unknown",
    }
)
_MODEL_KINDS = frozenset({"llm", "chat", "chat_model", "generation", "text_completion", "generate_content"})
_TOOL_KINDS = frozenset({"tool", "execute_tool", "function"})
_AGENT_KINDS = frozenset({"agent", "invoke_agent", "workflow"})

_MODEL_PARTS: frozenset[Part] = frozenset({"llm_calls", "messages", "output"})
_TOOL_PARTS: frozenset[Part] = frozenset({"tool_calls", "tool_arguments", "tool_results"})
_EVERY_PART: frozenset[Part] = frozenset(PARTS)
MARKS = _MODEL_KEYS | _TOOL_KEYS | _AGENT_KEYS | frozenset(_KIND_KEYS)


def would_hold(span: Span) -> frozenset[Part]:
    """What an unread span with these marks would have held: nothing when it carries no mark, or is of a kind
    that holds no call (a retriever, an embedding) or none known to hold one (a framework's step or task)."""
    attributes = span.attributes
    if attributes.keys().isdisjoint(MARKS):
        return frozenset()
    kind = _kind(attributes)
    if kind in _NOT_CALLS:
        return frozenset()
    if kind in _AGENT_KINDS or not attributes.keys().isdisjoint(_AGENT_KEYS):
        return _EVERY_PART
    if kind in _TOOL_KINDS or not attributes.keys().isdisjoint(_TOOL_KEYS):
        return _TOOL_PARTS
    if kind in _MODEL_KINDS or not attributes.keys().isdisjoint(_MODEL_KEYS):
        return _MODEL_PARTS
    return frozenset()  # a kind of its own (a step, a task): holds no call itself


def _kind(attributes: dict[str, Any]) -> str:
    for key in _KIND_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value.strip('"').lower()  # MLflow writes its span type JSON-encoded ("\"LLM\"")
    return ""


def describe(spans: list[Span]) -> list[Unread]:
    """The unread spans by instrumentation scope: how many, and a few of their names."""
    by_scope: dict[str, list[str]] = {}
    for span in spans:
        by_scope.setdefault(span.scope or "(no scope)", []).append(span.name)
    return [
        Unread(scope=scope, spans=len(names), names=list(dict.fromkeys(names))[:3]) for scope, names in by_scope.items()
    ]
