"""pydantic-ai's own attributes beside the GenAI conventions (its instrumentation formats 1 and 2).

Format 2: `agent run` spans with `pydantic_ai.all_messages` and `final_result`, `running tool`
spans with `tool_arguments` / `tool_response`. Format 1 also puts each chat call's messages in
an `events` attribute (a JSON list of legacy GenAI events) and the run's in
`all_messages_events`. Current formats are plain GenAI conventions, left to `genai.py` (whose
message converters this dialect reuses).
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import first, has_any, is_error, text

_RUN_KEYS = ("pydantic_ai.all_messages", "all_messages_events", "final_result")
_TOOL_KEYS = ("tool_arguments", "tool_response")
_OWN_KEYS = (*_RUN_KEYS, *_TOOL_KEYS, "events")


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    op = attrs.get("gen_ai.operation.name")
    if op == "invoke_agent" or span.name == "agent run":
        if has_any(attrs, _RUN_KEYS):
            return agent(span)
        return None
    if op == "execute_tool" and has_any(attrs, _TOOL_KEYS):
        return tool(span)
    if op in genai.LLM_OPERATIONS and "events" in attrs and "gen_ai.input.messages" not in attrs:
        return llm(span)
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    facts = genai.agent(span)
    facts.agent_name = text(first(attrs, "gen_ai.agent.name", "agent_name")) or facts.agent_name
    history = genai.from_genai(msg.as_list(attrs.get("pydantic_ai.all_messages")))
    if not history:
        inputs, outputs, _ = genai.from_events(_event_list(attrs.get("all_messages_events")))
        history = inputs + outputs
    history = genai.with_instructions(history, attrs.get("gen_ai.system_instructions"))
    facts.messages = history
    facts.input = facts.input or msg.last_user_text(history)
    final = attrs.get("final_result")
    if final is not None:
        facts.output = msg.result_text(final)
    return facts


def llm(span: Span) -> LLMFacts:
    facts = genai.llm(span)
    inputs, outputs, finish = genai.from_events(_event_list(span.attributes.get("events")))
    facts.input_messages = inputs
    facts.output_messages = outputs
    facts.finish_reason = facts.finish_reason or finish
    return facts


def tool(span: Span) -> ToolFacts:
    facts = genai.tool(span)
    attrs = span.attributes
    if "tool_arguments" in attrs:
        facts.arguments = msg.parse_json_maybe(attrs["tool_arguments"])
    if "tool_response" in attrs:
        facts.result = msg.result_text(attrs["tool_response"])
    facts.error = is_error(span)
    return facts


def _event_list(value: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(item.get("event.name")), item)
        for item in msg.as_list(value)
        if isinstance(item, dict) and isinstance(item.get("event.name"), str)
    ]


DIALECT = Dialect(
    name="pydantic-ai",
    priority=30,
    marks=frozenset(_OWN_KEYS),
    read=read,
    blobs=frozenset(
        {"pydantic_ai.all_messages", "all_messages_events", "events", "model_request_parameters", "logfire.json_schema"}
    ),
    agent_name_keys=("agent_name",),
    answer_tools=frozenset({"final_result"}),  # its output tool
)
