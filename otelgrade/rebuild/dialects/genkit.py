"""Genkit's own OpenTelemetry: every action a span typed by `genkit:type` (with `genkit:metadata:subtype`), its input
and output as JSON in `genkit:input` / `genkit:output`, `genkit:path` the chain of actions it runs in.

An executed prompt (`dotprompt`) is an agent: its instructions, model and tools. A model action's input is the
request (`{"messages", "tools"}`) and its output the response (`{"message", "finishReason", "usage", "raw"}`), in
Genkit's messages: roles system/user/model/tool, content parts `text`, `toolRequest {name, ref, input}` and
`toolResponse {name, ref, output}`. A tool action records its input and output, no call id. A prompt the model
calls as a tool (a `prompt` action run by a generation) hands the conversation over to that prompt, Genkit's
documented multi-agent pattern: its instructions and tools replace the caller's, a control transfer.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.span_readers import finish_reason, integer, is_error, text

_TYPE = "genkit:type"
_SUBTYPE = "genkit:metadata:subtype"
_NAME = "genkit:name"
_INPUT = "genkit:input"
_OUTPUT = "genkit:output"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    kind, subtype = attrs.get(_TYPE), attrs.get(_SUBTYPE)
    if kind == "dotprompt":
        return agent(span)
    if subtype == "model":
        return llm(span)
    if subtype == "tool":
        return tool(span)
    if subtype == "prompt" and _called_by_a_generation(span):
        return TransferFacts(to_agent=text(attrs.get(_NAME)) or span.name or None)
    if subtype == "flow":
        said = msg.loads(attrs.get(_INPUT))
        return ChainFacts(input=said if isinstance(said, str) and said else None)
    return None


def _called_by_a_generation(span: Span) -> bool:
    """The prompt action runs inside a generation (`.../{generate,t:util}/{name,t:action,s:prompt}`): the model
    called it as a tool."""
    path = span.attributes.get("genkit:path")
    return isinstance(path, str) and "{generate,t:util}/{" in path and path.endswith("s:prompt}")


def agent(span: Span) -> RunFacts:
    said = _object(span.attributes.get(_OUTPUT)).get("message")
    return RunFacts(
        agent_name=text(span.attributes.get(_NAME)) or span.name or None,
        output=msg.assistant_text(messages([said])),
    )


def llm(span: Span) -> LLMFacts:
    """A model action: Genkit's request and response; the provider's own finish reason where Genkit keeps its raw
    response (Genkit says `stop` for a response that asks for tools)."""
    attrs = span.attributes
    request, response = _object(attrs.get(_INPUT)), _object(attrs.get(_OUTPUT))
    usage, raw = _object(response.get("usage")), _object(response.get("raw"))
    choices = raw.get("choices")
    choice = _object(choices[0]) if isinstance(choices, list) and choices else {}
    said = response.get("message")
    provider, _, model = (text(attrs.get(_NAME)) or "").rpartition("/")
    return LLMFacts(
        model=text(raw.get("model")) or model or None,
        provider=provider or None,
        input_tokens=integer(usage.get("inputTokens")),
        output_tokens=integer(usage.get("outputTokens")),
        input_messages=messages(request.get("messages")),
        output_messages=messages([said]),
        finish_reason=finish_reason(choice.get("finish_reason")) or finish_reason(response.get("finishReason")),
    )


def _object(value: Any) -> dict[str, Any]:
    """A JSON object (text or parsed), else an empty one."""
    parsed = msg.loads(value) if isinstance(value, str) else value
    return parsed if isinstance(parsed, dict) else {}


def tool(span: Span) -> ToolFacts:
    attrs = span.attributes
    output = attrs.get(_OUTPUT)
    return ToolFacts(
        name=text(attrs.get(_NAME)) or span.name or "unknown",
        arguments=msg.parse_json_maybe(attrs.get(_INPUT)),
        result=msg.result_text(output) if output is not None else None,
        error=is_error(span) or attrs.get("genkit:state") == "error",
    )


def messages(raw: Any) -> list[msg.Message]:
    """Genkit's messages as OpenAI-style ones (a tool response is a `tool` message answering its request's ref)."""
    out: list[msg.Message] = []
    for message in raw if isinstance(raw, list) else ():
        if not isinstance(message, dict):
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[msg.Message] = []
        for part in message.get("content") or ():
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(asked := part.get("toolRequest"), dict):
                calls.append(msg.tool_call(asked.get("ref"), asked.get("name"), asked.get("input")))
            elif isinstance(answered := part.get("toolResponse"), dict):
                results.append(
                    msg.message(
                        "tool",
                        msg.result_text(answered.get("output")),
                        tool_call_id=text(answered.get("ref")),
                        name=text(answered.get("name")),
                    )
                )
        out.extend(msg.with_results(str(message.get("role") or "model"), texts, calls, results))
    return out


DIALECT = Dialect(
    name="genkit",
    priority=25,
    marks=frozenset({_TYPE}),
    read=read,
    blobs=frozenset({_INPUT, _OUTPUT}),
)
