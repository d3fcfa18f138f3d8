"""Haystack's own tracer (`haystack.tracing`, its OpenTelemetry backend on whenever the SDK is installed): spans
named for what ran, every value under `haystack.*`. A pipeline component is `haystack.component.run`
(`haystack.component.name`, `.type`: `Agent` for an agent, the run); an Agent's loop is `haystack.agent.run` (no
name of its own: an agent a tool runs is that call's work), each of its
steps `haystack.agent.step` holding one model call (`haystack.agent.step.llm`) and the tools it ran
(`haystack.agent.step.tool`, `haystack.tool.name`). Content (`*.input`, `*.output`) is written only with content
tracing on: messages are Haystack ChatMessages as JSON (`{"role", "content": [{"text"}, {"tool_call":
{"tool_name", "arguments", "id"}}, {"tool_call_result": {"result", "origin", "error"}}], "meta"}`), a model
call's output `{"replies": [...]}` with the model, finish reason and usage in each reply's `meta`; a model
call's input is a Python repr, not read.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import integer, is_error, text

_COMPONENT = "haystack.component.name"
_TOOL = "haystack.tool.name"
_STEP_LLM = "haystack.agent.step.llm.output"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    if span.name == "haystack.agent.step.llm":
        return _llm(attrs)
    if span.name == "haystack.agent.step.tool":
        return ToolFacts(
            name=text(attrs.get(_TOOL)) or "unknown",
            arguments=msg.parse_json_maybe(attrs.get("haystack.agent.step.tool.input")),
            result=msg.result_text(attrs.get("haystack.agent.step.tool.output")),
            error=is_error(span) or str(attrs.get("haystack.tool.error")).lower() == "true",
            description=text(attrs.get("haystack.tool.description")),
        )
    if span.name == "haystack.component.run" and attrs.get("haystack.component.type") == "Agent":
        return _run(
            text(attrs.get(_COMPONENT)), attrs.get("haystack.component.input"), attrs.get("haystack.component.output")
        )
    if span.name == "haystack.agent.run":  # the loop of the component's agent, or of an agent run as a tool
        return ChainFacts(input=msg.last_user_text(_messages(attrs.get("haystack.agent.input"))))
    return None


def _run(name: str | None, given: Any, returned: Any) -> RunFacts:
    asked = _messages(given)
    answered = _messages(returned)
    return RunFacts(
        agent_name=name,
        input=msg.last_user_text(asked),
        output=msg.assistant_text(answered[-1:]) if answered and answered[-1].get("role") == "assistant" else None,
    )


def _llm(attrs: dict[str, Any]) -> LLMFacts:
    document = msg.loads(attrs.get(_STEP_LLM))
    found = document.get("replies") if isinstance(document, dict) else None
    replies = [r for r in found or () if isinstance(r, dict)]
    meta = _object(replies[0].get("meta")) if replies else {}
    usage = _object(meta.get("usage"))
    return LLMFacts(
        model=text(meta.get("model")),
        input_tokens=integer(usage.get("prompt_tokens")),
        output_tokens=integer(usage.get("completion_tokens")),
        output_messages=_from_chat_messages(replies),
        finish_reason=text(meta.get("finish_reason")),
    )


def _messages(value: Any) -> list[msg.Message]:
    """The ChatMessages of a component's or agent's input or output (`{"messages": [...]}`)."""
    document = msg.loads(value)
    found = document.get("messages") if isinstance(document, dict) else None
    return _from_chat_messages([m for m in found or () if isinstance(m, dict)])


def _from_chat_messages(raw: list[dict[str, Any]]) -> list[msg.Message]:
    out: list[msg.Message] = []
    for message in raw:
        role = str(message.get("role") or "assistant")
        texts, calls = [], []
        for part in message.get("content") or ():
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(call := part.get("tool_call"), dict):
                calls.append(msg.tool_call(call.get("id"), call.get("tool_name"), call.get("arguments")))
            elif isinstance(result := part.get("tool_call_result"), dict):
                origin = _object(result.get("origin"))
                out.append(
                    msg.message("tool", msg.result_text(result.get("result")), tool_call_id=text(origin.get("id")))
                )
        if texts or calls or role != "tool":
            out.append(msg.message(role, "\n".join(texts) or None, calls))
    return out


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


DIALECT = Dialect(
    name="haystack",
    priority=60,
    read=read,
    marks=frozenset({_COMPONENT, _TOOL, "haystack.agent.max_steps", "haystack.agent.step"}),
    name_prefixes=("haystack.agent.", "haystack.component.run"),
    blobs=frozenset({"haystack.agent.input", "haystack.agent.output", "haystack.component.input", _STEP_LLM}),
    blob_prefixes=("haystack.pipeline.", "haystack.component.output"),
)
