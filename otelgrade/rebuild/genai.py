"""OpenTelemetry GenAI semantic conventions: `invoke_agent`, `chat`, `execute_tool` spans.

Messages are read from, in order of preference: the `gen_ai.input.messages` /
`gen_ai.output.messages` attributes (JSON strings or structured values), the same attributes on
a `gen_ai.client.inference.operation.details` event, and the older per-message events
(`gen_ai.user.message`, `gen_ai.choice`, ...) whether they came as span events or log records.
"""

from __future__ import annotations

from typing import Any

from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.facts import LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.fields import first, first_text, genai_events, integer, is_error, name_after, payload, text
from otelgrade.spans import Span

NAME = "genai"

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion", "responses"})
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"


def read(span: Span) -> RunFacts | LLMFacts | ToolFacts | None:
    op = span.attributes.get("gen_ai.operation.name")
    if op == "invoke_agent":
        return agent(span)
    if op in LLM_OPERATIONS:
        return llm(span)
    if op == "execute_tool":
        return tool(span)
    if op is None and any(e.name == "gen_ai.choice" for e in span.events) and "gen_ai.request.model" in span.attributes:
        return llm(span)  # older releases without gen_ai.operation.name
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    name = text(first(attrs, "gen_ai.agent.name", "agent_name", "agent.name")) or name_after(span, "invoke_agent")
    inputs, outputs, _ = _message_attrs(span)
    ev_in, ev_out, _ = msg.from_events(genai_events(span))
    inputs = inputs or ev_in
    outputs = outputs or ev_out
    return RunFacts(
        agent_name=name,
        input=msg.last_user_text(inputs),
        output=msg.assistant_text(outputs),
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    inputs, outputs, raw_outputs = _message_attrs(span)
    finish = first_text(attrs.get("gen_ai.response.finish_reasons")) or msg.finish_reason_of(raw_outputs)
    if not inputs and not outputs:
        ev_in, ev_out, ev_finish = msg.from_events(genai_events(span))
        inputs, outputs = ev_in, ev_out
        finish = finish or ev_finish
    inputs = with_instructions(inputs, attrs.get("gen_ai.system_instructions"))
    return LLMFacts(
        model=text(first(attrs, "gen_ai.response.model", "gen_ai.request.model")),
        provider=text(first(attrs, "gen_ai.provider.name", "gen_ai.system")),
        input_tokens=integer(first(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
        output_tokens=integer(first(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")),
        input_messages=inputs,
        output_messages=outputs,
        finish_reason=finish,
    )


def tool(span: Span) -> ToolFacts:
    attrs = span.attributes
    name = text(attrs.get("gen_ai.tool.name")) or name_after(span, "execute_tool") or span.name or "unknown"
    arguments: Any = attrs.get("gen_ai.tool.call.arguments")
    result: Any = attrs.get("gen_ai.tool.call.result")
    for event_name, content in genai_events(span):  # Strands: arguments and result as events
        if arguments is None and event_name == "gen_ai.tool.message":
            arguments = content.get("content")
        elif result is None and event_name == "gen_ai.choice":
            result = msg.text_of(_blocks(content.get("message")))
    return ToolFacts(
        name=name,
        call_id=text(attrs.get("gen_ai.tool.call.id")),
        arguments=msg.parse_json_maybe(arguments),
        result=msg.result_text(result),
        error=is_error(span),
    )


def with_instructions(inputs: list[msg.Message], instructions: Any) -> list[msg.Message]:
    """Prepend `gen_ai.system_instructions` as a system message when the input has none."""
    if instructions is None or any(m.get("role") == "system" for m in inputs):
        return inputs
    parts = msg.as_list(instructions) if not isinstance(instructions, str) or instructions[:1] in "[{" else []
    content = msg.text_of([p for p in parts if isinstance(p, dict)]) if parts else text(instructions)
    return [msg.message("system", content), *inputs] if content else inputs


def _message_attrs(span: Span) -> tuple[list[msg.Message], list[msg.Message], list[Any]]:
    """(input messages, output messages, raw output messages) from attributes or a details event."""
    attrs = span.attributes
    raw_in, raw_out = attrs.get("gen_ai.input.messages"), attrs.get("gen_ai.output.messages")
    if raw_in is None and raw_out is None:
        for event in span.events:
            if event.name == _DETAILS_EVENT:
                details = payload(event)
                raw_in, raw_out = details.get("gen_ai.input.messages"), details.get("gen_ai.output.messages")
                break
    outputs = msg.as_list(raw_out)
    return msg.from_genai(msg.as_list(raw_in)), msg.from_genai(outputs), outputs


def _blocks(value: Any) -> Any:
    """A `gen_ai.choice` message that is a JSON string of content blocks, parsed."""
    if isinstance(value, str) and value.lstrip()[:1] == "[":
        parsed = msg.loads(value)
        return parsed if parsed is not None else value
    return value
