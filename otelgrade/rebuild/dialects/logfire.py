"""Pydantic Logfire: spans named by their message template (`logfire.msg_template`, the formatted text in
`logfire.msg`), with no `gen_ai.operation.name` on the OpenAI Agents ones.

- `instrument_openai()` / `instrument_anthropic()` (scopes `logfire.openai`, `logfire.anthropic`): one span
  per request, `Chat Completion with {request_data[model]!r}` / `Message with {request_data[model]!r}`.
  Span format 2 (the default) writes GenAI attributes (`gen_ai.input.messages`, ...), read as `genai.py`
  reads them; format 1 writes the whole request as `request_data` (OpenAI chat messages, or Anthropic's
  messages and `system`) and the answer as `response_data` (`message` in OpenAI form for both providers;
  Anthropic tool-call arguments are wrapped as `{"input": {...}}`).
- `instrument_openai_agents()` (scope `logfire.openai_agents`), the SDK's spans: `Agent run: {name!r}`
  (`name`), `Chat completion with {gen_ai.request.model!r}` (`input` / `output`: OpenAI chat messages),
  `Function: {name}` (`input`: arguments JSON, `output`), `Handoff: {from_agent} → {to_agent}`, the runner
  as `OpenAI Agents trace: {name}` and `Task: {name}`, each model turn as `Turn {turn} for agent <name>`.
  A failed span has error status and an `error` attribute.

`logfire.configure(scrubbing=...)` replaces values whose key (or text) matches its patterns by
`[Scrubbed due to '<match>']` (never on `logfire.openai` / `logfire.anthropic` spans): read as absent.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.anthropic_messages import from_anthropic
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.span_readers import FINISH_REASON_KEYS, finish_reason, first, integer, is_error, text

TEMPLATE = "logfire.msg_template"
_OPENAI = "Chat Completion with {request_data[model]!r}"
_ANTHROPIC = "Message with {request_data[model]!r}"
_AGENT = "Agent run: {name!r}"
_GENERATION = "Chat completion with {gen_ai.request.model!r}"
_FUNCTION = "Function: {name}"
_RUNNER = ("OpenAI Agents trace: {name}", "Task: ")
_TURN = "Turn {turn} for agent "
_HANDOFF = "Handoff: {from_agent} → {to_agent}"
SCRUBBED = "[Scrubbed due to "


def read(span: Span) -> Facts | None:
    template = span.attributes.get(TEMPLATE)
    if not isinstance(template, str):
        return None
    if template in (_OPENAI, _ANTHROPIC):
        return provider_call(span, anthropic=template == _ANTHROPIC)
    if template == _GENERATION:
        return generation(span)
    if template == _FUNCTION:
        return function(span)
    if template == _AGENT:
        return RunFacts(agent_name=text(span.attributes.get("name")))
    if template.startswith(_RUNNER):
        return ChainFacts(f"runs the OpenAI Agents workflow `{text(span.attributes.get('name'))}`: the request")
    if template.startswith(_TURN):
        return ChainFacts(f"one model turn of {text(span.attributes.get('agent_name'))}: a step of its run")
    if template == _HANDOFF:
        return TransferFacts(text(span.attributes.get("to_agent")), text(span.attributes.get("from_agent")))
    return None


def provider_call(span: Span, anthropic: bool) -> LLMFacts:
    """A model call of `instrument_openai()` / `instrument_anthropic()`, in either span format."""
    attrs = span.attributes
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        return genai.llm(span)
    request = msg.loads(attrs.get("request_data"))
    request = request if isinstance(request, dict) else {}
    response = msg.loads(attrs.get("response_data"))
    response = response if isinstance(response, dict) else {}
    history = msg.as_list(request.get("messages"))
    inputs = from_anthropic(history, request.get("system")) if anthropic else msg.from_openai(history)
    answer = response.get("message")
    outputs = msg.from_openai([answer]) if isinstance(answer, dict) else []
    if anthropic:
        outputs = [_unwrapped_input(m) for m in outputs]
    usage: dict[str, Any] = response["usage"] if isinstance(response.get("usage"), dict) else {}
    return LLMFacts(
        model=text(first(attrs, "gen_ai.response.model", "gen_ai.request.model")) or text(request.get("model")),
        provider=text(first(attrs, "gen_ai.provider.name", "gen_ai.system")),
        input_tokens=integer(first(attrs, "gen_ai.usage.input_tokens"))
        or integer(first(usage, "prompt_tokens", "input_tokens")),
        output_tokens=integer(first(attrs, "gen_ai.usage.output_tokens"))
        or integer(first(usage, "completion_tokens", "output_tokens")),
        input_messages=inputs,
        output_messages=outputs,
        finish_reason=finish_reason(first(attrs, *FINISH_REASON_KEYS)),
    )


def _shown(value: Any) -> Any:
    """A value as recorded, None where Logfire's scrubbing replaced it (`[Scrubbed due to '<match>']`)."""
    return None if isinstance(value, str) and value.startswith(SCRUBBED) else value


def _unwrapped_input(message: msg.Message) -> msg.Message:
    """Format 1 writes an Anthropic tool call's arguments as `{"input": <arguments>}`: the arguments."""
    for call in message.get("tool_calls") or ():
        function = call["function"]
        wrapped = msg.loads(function["arguments"])
        if isinstance(wrapped, dict) and wrapped.keys() == {"input"}:
            function["arguments"] = msg.dumps_arguments(wrapped["input"])
    return message


def generation(span: Span) -> LLMFacts:
    """A model call of the OpenAI Agents SDK (its chat-completions model): messages in `input` / `output`."""
    attrs = span.attributes
    return LLMFacts(
        model=text(first(attrs, "gen_ai.response.model", "gen_ai.request.model")),
        provider=text(attrs.get("gen_ai.system")),
        input_tokens=integer(attrs.get("gen_ai.usage.input_tokens")),
        output_tokens=integer(attrs.get("gen_ai.usage.output_tokens")),
        input_messages=msg.from_openai(msg.as_list(attrs.get("input"))),
        output_messages=msg.from_openai(msg.as_list(attrs.get("output"))),
    )


def function(span: Span) -> ToolFacts:
    """A function tool of the OpenAI Agents SDK: arguments in `input`, result in `output`."""
    attrs = span.attributes
    return ToolFacts(
        name=text(attrs.get("name")) or "unknown",
        arguments=msg.parse_json_maybe(_shown(attrs.get("input"))),
        result=msg.result_text(_shown(attrs.get("output"))),
        error=is_error(span),
    )


DIALECT = Dialect(
    name="logfire",
    priority=20,
    marks=frozenset({TEMPLATE}),
    read=read,
    blobs=frozenset({"logfire.json_schema"}),
    transfer_names=(r"transfer_to_",),  # OpenAI Agents' handoff tools
)
