"""LiteLLM's own OpenTelemetry callback (`litellm.callbacks = ["otel"]`), in the Python SDK.

For each completion it writes the call's GenAI attributes (`gen_ai.*`, `litellm.call_id`, ...) onto the span that
is current: the application's own span by default, each call's attributes over the previous one's (a
`litellm_request` span of its own with `USE_OTEL_LITELLM_REQUEST_SPAN`). With message logging on, each successful
call also gets a `raw_gen_ai_request` span holding the provider's request and response as
`llm.<provider>.<field>`: the messages and choices as Python reprs. A failed call leaves only `error.*` beside
the earlier call's attributes, and no span.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.anthropic_messages import from_anthropic
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import Facts, LLMFacts
from otelgrade.rebuild.span_readers import FINISH_REASON_KEYS, finish_reason, first, has_any, integer, text

RAW_SPAN = "raw_gen_ai_request"
OWN_SPANS = frozenset({RAW_SPAN, "litellm_request", "Received Proxy Server Request"})
_CALL_ID = "litellm.call_id"
# A span another instrumentation wrote (an agent's, a workflow's) keeps its kind when LiteLLM writes a call over it.
_OTHER_KINDS = ("traceloop.span.kind", "openinference.span.kind")


def read(span: Span) -> Facts | None:
    if span.name == RAW_SPAN:
        return raw_call(span)
    if _CALL_ID in span.attributes and not has_any(span.attributes, _OTHER_KINDS):
        return record(span)
    return None


def raw_call(span: Span) -> LLMFacts | None:
    """A successful call as the provider saw it: `llm.<provider>.messages` sent; back, OpenAI's `choices`, or the
    Messages API's `content` blocks and `stop_reason` (the request's `system` beside its messages)."""
    attrs = span.attributes
    key = next((k for k in attrs if k.startswith("llm.") and k.endswith(".messages")), None)
    if key is None:
        return None
    prefix = key.removesuffix("messages")
    sent = _value(attrs[key])
    sent = sent if isinstance(sent, list) else []
    usage = _value(attrs.get(prefix + "usage"))
    usage = usage if isinstance(usage, dict) else {}
    facts = LLMFacts(
        model=text(attrs.get(prefix + "model")),
        provider=prefix.split(".")[1],
        input_tokens=integer(first(usage, "prompt_tokens", "input_tokens")),
        output_tokens=integer(first(usage, "completion_tokens", "output_tokens")),
    )
    blocks = _value(attrs.get(prefix + "content"))
    if isinstance(blocks, list) and prefix + "choices" not in attrs:
        facts.input_messages = from_anthropic(sent, _value(attrs.get(prefix + "system")))
        facts.output_messages = from_anthropic([{"role": "assistant", "content": blocks}])
        facts.finish_reason = text(attrs.get(prefix + "stop_reason"))
        return facts
    choices = _value(attrs.get(prefix + "choices"))
    first_choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    facts.input_messages = msg.from_openai(sent)
    facts.output_messages = msg.from_openai([first_choice.get("message")])
    facts.finish_reason = text(first_choice.get("finish_reason"))
    return facts


def record(span: Span) -> LLMFacts:
    """The attributes of the last call logged while the span was current. On a span that is not LiteLLM's own,
    earlier calls' were overwritten (`overwritten`). A failure's record keeps the earlier call's output and usage
    beside its `error.*`: only its request is its own."""
    attrs = span.attributes
    failed = "error.type" in attrs or "error.message" in attrs
    return LLMFacts(
        model=text(first(attrs, "gen_ai.response.model", "gen_ai.request.model")),
        provider=text(attrs.get("gen_ai.system")),
        input_tokens=None if failed else integer(attrs.get("gen_ai.usage.input_tokens")),
        output_tokens=None if failed else integer(attrs.get("gen_ai.usage.output_tokens")),
        input_messages=messages(attrs.get("gen_ai.input.messages")),
        output_messages=[] if failed else messages(attrs.get("gen_ai.output.messages")),
        finish_reason=None if failed else finish_reason(first(attrs, *FINISH_REASON_KEYS)),
        failed=failed,
        overwritten=span.name not in OWN_SPANS,
    )


def messages(value: Any) -> list[msg.Message]:
    """LiteLLM's GenAI messages: `parts` for the text, an OpenAI `tool_calls` / `tool_call_id` beside them."""
    out = []
    for raw in msg.as_list(value):
        if isinstance(raw, dict):
            parts = raw.get("parts")
            said = content_text(parts) if isinstance(parts, list) else raw.get("content")
            out.append({**raw, "content": said})
    return msg.from_openai(out)


def _value(value: Any) -> Any:
    """A field of the raw request or response: JSON, else a Python repr (read as a literal, no code runs)."""
    if not isinstance(value, str):
        return value
    if value.lstrip("[ ").startswith(("{'", "'")):  # a repr: no JSON parse to fail first
        return msg.python_literal(value)
    parsed = msg.loads(value)
    return parsed if parsed is not None else msg.python_literal(value)


DIALECT = Dialect(
    name="litellm",
    priority=35,
    marks=frozenset({_CALL_ID}),
    name_prefixes=(RAW_SPAN,),
    read=read,
    blobs=frozenset({"hidden_params"}),
    blob_prefixes=("llm.request.functions.", "metadata."),
)
