"""pydantic-ai's own attributes beside the GenAI conventions (its instrumentation formats 1 and 2).

Format 2: `agent run` spans with `pydantic_ai.all_messages` and `final_result`, `running tool`
spans with `tool_arguments` / `tool_response`. Format 1 also puts each chat call's messages in
an `events` attribute (a JSON list of legacy GenAI events) and the run's in
`all_messages_events`. Current formats are plain GenAI conventions (see `genai.py`).
"""

from __future__ import annotations

from typing import Any

from otelgrade.rebuild import genai
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.facts import LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.fields import first, is_error, text
from otelgrade.spans import Span

NAME = "pydantic-ai"

_RUN_KEYS = ("pydantic_ai.all_messages", "all_messages_events", "final_result")


def read(span: Span) -> RunFacts | LLMFacts | ToolFacts | None:
    attrs = span.attributes
    op = attrs.get("gen_ai.operation.name")
    if op == "invoke_agent" or span.name == "agent run":
        if any(key in attrs for key in _RUN_KEYS):
            return agent(span)
        return None
    if op == "execute_tool" and ("tool_arguments" in attrs or "tool_response" in attrs):
        return tool(span)
    if op in genai.LLM_OPERATIONS and "events" in attrs and "gen_ai.input.messages" not in attrs:
        return llm(span)
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    facts = genai.agent(span)
    facts.agent_name = text(first(attrs, "gen_ai.agent.name", "agent_name")) or facts.agent_name
    history = msg.from_genai(msg.as_list(attrs.get("pydantic_ai.all_messages")))
    if not history:
        inputs, outputs, _ = msg.from_events(_event_list(attrs.get("all_messages_events")))
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
    inputs, outputs, finish = msg.from_events(_event_list(span.attributes.get("events")))
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
