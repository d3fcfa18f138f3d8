"""The generic dialect: OpenTelemetry GenAI conventions (`invoke_agent`, `chat`, `execute_tool` spans).

Messages are read from, in order of preference: the `gen_ai.input.messages` /
`gen_ai.output.messages` attributes (JSON strings or structured values), the same attributes on
a `gen_ai.client.inference.operation.details` event, and the older per-message events
(`gen_ai.user.message`, `gen_ai.choice`, ...) whether they came as span events or log records.
GenAI `{role, parts}` messages, and the Bedrock-style content blocks Strands puts in events, are
converted here; asked last, this dialect reads whatever GenAI span the others leave.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.anthropic_messages import from_anthropic
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import Facts, LLMFacts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.span_readers import (
    FINISH_REASON_KEYS,
    finish_reason,
    first,
    genai_events,
    integer,
    is_error,
    name_after,
    payload,
    text,
)

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion", "responses"})
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
# A span of its own for a control transfer between agents (the OpenAI Agents SDK's handoff span, as the OTel contrib
# and OpenLLMetry instrumentations write it), with `gen_ai.handoff.from_agent` / `gen_ai.handoff.to_agent`.
HANDOFF_OPERATIONS = frozenset({"agent_handoff", "handoff"})
# The roles of a conversation's messages (GenAI's, OpenAI's `developer`, Gemini's `model`); any other is unmapped.
_CONVERSATION_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "model"})


def read(span: Span) -> Facts | None:
    op = span.attributes.get("gen_ai.operation.name")
    if op == "invoke_agent":
        return agent(span)
    if op in LLM_OPERATIONS:
        return llm(span)
    if op == "execute_tool":
        return tool(span)
    if op == "goto":  # a graph routing control to a node (LangGraph's `Command(goto=...)`, OpenLLMetry)
        return TransferFacts(to_agent=name_after(span, "goto"))
    if op in HANDOFF_OPERATIONS:
        return handoff(span)
    if op is None and any(e.name == "gen_ai.choice" for e in span.events) and "gen_ai.request.model" in span.attributes:
        return llm(span)  # older releases without gen_ai.operation.name
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    name = text(first(attrs, "gen_ai.agent.name", "agent_name", "agent.name")) or name_after(span, "invoke_agent")
    inputs, outputs, _ = _message_attrs(span)
    ev_in, ev_out, _ = from_events(genai_events(span))
    inputs = inputs or ev_in
    outputs = outputs or ev_out
    return RunFacts(
        agent_name=name,
        input=msg.last_user_text(inputs),
        output=msg.assistant_text(outputs),
    )


def handoff(span: Span) -> TransferFacts:
    """A handoff span: the agents it names (the target may be unknown when the span starts: the agent that acts
    next, decided by `handoffs`)."""
    attrs = span.attributes
    return TransferFacts(
        to_agent=text(attrs.get("gen_ai.handoff.to_agent")),
        from_agent=text(attrs.get("gen_ai.handoff.from_agent")),  # not `gen_ai.agent.name`: the contrib's is its own
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    inputs, outputs, raw_outputs = _message_attrs(span)
    finish = finish_reason(first(attrs, *FINISH_REASON_KEYS)) or _finish_reason_of(raw_outputs)
    if not inputs and not outputs:
        ev_in, ev_out, ev_finish = from_events(genai_events(span))
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
    named = text(attrs.get("gen_ai.tool.name")) or name_after(span, "execute_tool")
    name = named or span.name or "unknown"
    arguments: Any = attrs.get("gen_ai.tool.call.arguments")
    result: Any = attrs.get("gen_ai.tool.call.result")
    for event_name, content in genai_events(span):  # Strands: arguments and result as events
        if arguments is None and event_name == "gen_ai.tool.message":
            arguments = content.get("content")
        elif result is None and event_name == "gen_ai.choice":
            result = content_text(_blocks(content.get("message"))) or None
    return ToolFacts(
        name=name,
        call_id=text(attrs.get("gen_ai.tool.call.id")),
        arguments=msg.parse_json_maybe(arguments),
        result=msg.result_text(result),
        error=is_error(span),
        description=text(attrs.get("gen_ai.tool.description")),
        anonymous=not named,
    )


def with_instructions(inputs: list[msg.Message], instructions: Any) -> list[msg.Message]:
    """Prepend `gen_ai.system_instructions` as a system message when the input has none."""
    if instructions is None or any(m.get("role") == "system" for m in inputs):
        return inputs
    parts = msg.as_list(instructions) if not isinstance(instructions, str) or instructions[:1] in "[{" else []
    content = content_text([p for p in parts if isinstance(p, dict)]) if parts else text(instructions)
    return [msg.message("system", content), *inputs] if content else inputs


def _message_attrs(span: Span) -> tuple[list[msg.Message], list[msg.Message], list[Any]]:
    """(input messages, output messages, raw output messages) from attributes or a details event."""
    attrs = span.attributes
    raw_in, raw_out = attrs.get("gen_ai.input.messages"), attrs.get("gen_ai.output.messages")
    if raw_in is None and raw_out is None:
        for event in span.events:  # one event with both, or (Strands) one event per attribute
            if event.name == _DETAILS_EVENT:
                details = payload(event)
                raw_in = raw_in if raw_in is not None else details.get("gen_ai.input.messages")
                raw_out = raw_out if raw_out is not None else details.get("gen_ai.output.messages")
    outputs = msg.as_list(raw_out)
    return from_genai(msg.as_list(raw_in)), from_genai(outputs, answering=True), outputs


def _blocks(value: Any) -> Any:
    """A `gen_ai.choice` message that is a JSON string of content blocks, parsed."""
    if isinstance(value, str) and value.lstrip()[:1] == "[":
        parsed = msg.loads(value)
        return parsed if parsed is not None else value
    return value


def _finish_reason_of(messages: Iterable[Any]) -> str | None:
    for raw in messages:
        if isinstance(raw, dict) and isinstance(raw.get("finish_reason"), str):
            return str(raw["finish_reason"])
    return None


# --- GenAI semantic-convention messages ({role, parts}) -----------------------------------


def from_genai(messages: Iterable[Any], answering: bool = False) -> list[msg.Message]:
    """GenAI `gen_ai.input.messages` / `gen_ai.output.messages` (parts) to OpenAI messages.

    Tool results (`tool_call_response` parts) become one `tool` message each, whatever role
    carried them (pydantic-ai puts them in a `user` message). A role outside the conversation's
    (`unknown`, none: what an instrumentation writes for a message type it cannot map) is the
    assistant's when the message is a model's output (`answering`) or asks for tools.
    """
    out: list[msg.Message] = []
    for raw in messages:
        if not isinstance(raw, dict):
            continue
        if "parts" not in raw:
            out.extend(msg.from_openai([raw]))
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[msg.Message] = []
        for part in raw.get("parts") or ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                if isinstance(part.get("content"), str):
                    texts.append(part["content"])
            elif kind == "tool_call":
                calls.append(msg.tool_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                response = part.get("response", part.get("result"))
                name = part.get("name")
                results.append(
                    msg.message(
                        "tool",
                        msg.result_text(response),
                        tool_call_id=text(part.get("id")),
                        name=name if isinstance(name, str) else None,
                    )
                )
        role = raw.get("role")
        if role not in _CONVERSATION_ROLES and (answering or calls):
            role = "assistant"
        out.extend(msg.with_results(str(role or "assistant"), texts, calls, results))
    return out


# --- Bedrock-style content blocks (Strands) -----------------------------------------------


def from_blocks(role: str, blocks: Any) -> list[msg.Message]:
    """Content blocks (`text`, `toolUse`, `toolResult`; Anthropic's `tool_use`, `tool_result`) of one message, as
    messages."""
    if isinstance(blocks, str):
        parsed = msg.loads(blocks) if blocks.lstrip()[:1] in ("[", "{") else None
        if parsed is None:
            return [msg.message(role, blocks)]
        blocks = parsed
    if isinstance(blocks, dict):
        blocks = [blocks]
    if not isinstance(blocks, list):
        return []
    if any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in blocks):
        return from_anthropic([{"role": role, "content": blocks}])  # Anthropic's blocks, as its instrumentations log
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[msg.Message] = []
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif isinstance(block.get("toolUse"), dict):
                use = block["toolUse"]
                calls.append(msg.tool_call(use.get("toolUseId"), use.get("name"), use.get("input")))
            elif isinstance(block.get("toolResult"), dict):
                res = block["toolResult"]
                results.append(
                    msg.message(
                        "tool", content_text(res.get("content")) or None, tool_call_id=text(res.get("toolUseId"))
                    )
                )
    return msg.with_results(role, texts, calls, results)


# --- legacy GenAI events ------------------------------------------------------------------

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def from_events(
    events: Iterable[tuple[str, dict[str, Any]]],
) -> tuple[list[msg.Message], list[msg.Message], str | None]:
    """Legacy GenAI message events -> (input messages, output messages, finish reason).

    Each event is (name, payload) where the payload merges the event's attributes and body.
    """
    inputs: list[msg.Message] = []
    outputs: list[msg.Message] = []
    finish: str | None = None
    for name, content in events:
        role = _EVENT_ROLES.get(name)
        if role is not None:
            inputs.extend(_event_message(str(content.get("role") or role), content))
        elif name == "gen_ai.choice":
            body = content.get("message")
            if isinstance(body, dict) and not body.get("tool_calls") and content.get("tool_calls"):
                body = {**body, "tool_calls": content["tool_calls"]}  # OpenLLMetry: the calls beside the message
            if isinstance(body, dict):
                outputs.extend(_event_message(str(body.get("role") or "assistant"), body))
            elif body is not None:
                outputs.extend(from_blocks("assistant", body))
            if isinstance(content.get("finish_reason"), str):
                finish = content["finish_reason"]
    return inputs, outputs, finish


def _event_message(role: str, event: dict[str, Any]) -> list[msg.Message]:
    content = event.get("content")
    if isinstance(content, (list, dict)) or (isinstance(content, str) and _looks_like_blocks(content)):
        blocks = from_blocks(role, content)
        if blocks:
            if role == "tool" and event.get("id") and len(blocks) == 1 and not blocks[0].get("tool_call_id"):
                blocks[0]["tool_call_id"] = str(event["id"])
            return blocks
    extra: dict[str, Any] = {}
    if role == "tool":
        extra["tool_call_id"] = text(event.get("id") or event.get("tool_call_id"))
        extra["name"] = event.get("name") if isinstance(event.get("name"), str) else None
    return [msg.message(role, content_text(content) or None, msg.openai_tool_calls(event), **extra)]


def _looks_like_blocks(value: str) -> bool:
    head = value.lstrip()[:2]
    return head in ("[{", '{"') and any(key in value for key in ('"text"', '"toolUse"', '"toolResult"'))


DIALECT = Dialect(
    name="genai",
    priority=100,
    marks=frozenset({"gen_ai.operation.name", "gen_ai.request.model"}),
    read=read,
    blobs=frozenset(
        {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.definitions"}
    ),
    agent_name_keys=("gen_ai.agent.name",),
    # OpenAI Agents (`transfer_to_<agent>`) and ADK (`transfer_to_agent`, the agent as an argument)
    transfer_names=(r"transfer_to_",),
)
