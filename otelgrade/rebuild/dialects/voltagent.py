"""VoltAgent's own OpenTelemetry observability (scope `@voltagent/core`): spans typed by `span.type` under an
agent's `entity.*` attributes. An agent's run is the span named after the agent (a sub-agent's `subagent:<name>`,
its name in `subagent.name`; `entity.name` there is its supervisor's), with the request in `input` (text, or a
sub-agent's UI messages: `[{"role", "parts": [{"type": "text", "text"}]}]`) and the answer in `output`. `llm:*`
(`span.type=llm`) is one span per generation of the agent, however many model calls it made: the prompt it
started from (`llm.messages`, AI SDK messages), the usage and finish reason, no response. `tool.execution:*`
(`span.type=tool`): `tool.name`, `tool.call.id`, `input` (the arguments as JSON), `output`.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects.vercel import from_vercel
from otelgrade.rebuild.facts import Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import first, integer, is_error, text

_KIND = "span.type"
_ENTITY = "entity.type"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    kind = attrs.get(_KIND)
    if kind == "llm":
        return _llm(attrs)
    if kind == "tool":
        return ToolFacts(
            name=text(attrs.get("tool.name")) or span.name.removeprefix("tool.execution:"),
            call_id=text(attrs.get("tool.call.id")),
            arguments=msg.parse_json_maybe(attrs.get("input")),
            result=msg.result_text(attrs.get("output")),
            error=is_error(span),
            description=text(attrs.get("tool.description")),
        )
    if kind is None and attrs.get(_ENTITY) == "agent":
        return RunFacts(
            agent_name=text(first(attrs, "subagent.name", "entity.name")),
            input=_request(attrs.get("input")),
            output=text(attrs.get("output")),
        )
    return None


def _llm(attrs: dict[str, Any]) -> LLMFacts:
    return LLMFacts(
        model=text(attrs.get("llm.model")),
        input_tokens=integer(attrs.get("llm.usage.prompt_tokens")),
        output_tokens=integer(attrs.get("llm.usage.completion_tokens")),
        input_messages=from_vercel(msg.as_list(attrs.get("llm.messages"))),
        finish_reason=text(attrs.get("llm.finish_reason")),
        generation=True,
    )


def _request(value: Any) -> str | None:
    """The request text: as written, or the last user message's text parts of UI messages."""
    if not (isinstance(value, str) and value[:1] == "["):
        return text(value)
    texts = [
        part["text"]
        for message in msg.as_list(value)
        if isinstance(message, dict) and message.get("role") == "user"
        for part in message.get("parts") or ()
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    return texts[-1] if texts else None


DIALECT = Dialect(
    name="voltagent",
    priority=55,
    read=read,
    marks=frozenset({"voltagent.operation_id", _ENTITY}),
    blobs=frozenset({"agent.messages", "agent.messages.ui", "agent.stateSnapshot", "llm.messages", "tool.parameters"}),
)
