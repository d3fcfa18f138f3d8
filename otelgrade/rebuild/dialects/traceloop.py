"""OpenLLMetry / Traceloop: `traceloop.span.kind` workflow/agent/tool spans and LLM spans.

Older releases flatten messages into `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` (tool calls
as `...tool_calls.M.{id,name,arguments}`); current ones write GenAI JSON messages, read by
`genai.py`. Tool spans record `traceloop.entity.input` (`{"args": [...], "kwargs": {...}}`) and
`traceloop.entity.output` (JSON), and no call id; the Agno instrumentation writes a tool's outcome as the
repr of Agno's execution result (`status='failure' result=None error='...' ...`) and names a Team only in
`agno.team.name`. The CrewAI instrumentation writes the crew's answer (`crewai.crew.result`) and each task's
description, the request it was given, whatever the content switch says. The LlamaIndex instrumentation
writes an agent workflow's tool step as a `task` span with `tool.name` and `tool.arguments`, its outcome (call id,
result, failure) as the step's JSON output, and no span per agent: the agent each step is for stands only in the
step's event (`current_agent_name` in its JSON input or output).
"""

from __future__ import annotations

import re
from ast import literal_eval
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import langgraph
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import (
    FINISH_REASON_KEYS,
    finish_reason,
    first,
    has_any,
    integer,
    is_error,
    raised,
    text,
)

# Flattened messages always start at index 0, so these keys tell the format without scanning every key.
_FLAT_FIRST = tuple(f"gen_ai.{side}.0.{field}" for side in ("prompt", "completion") for field in ("role", "content"))
_FLAT = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")
# Agno's execution result as its repr: the status, the result and the error, before the other fields.
_EXECUTION = re.compile(r"^status='(\w+)' result=(.*?) error=(None|'.*?'|\".*?\") \w+=", re.DOTALL)


_CREW_RESULT = "crewai.crew.result"
_TASK = "crewai.task.description"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    if _CREW_RESULT in attrs or _TASK in attrs:
        return crew(span)
    kind = attrs.get("traceloop.span.kind")
    if kind in ("agent", "workflow"):
        return agent(span)
    if kind == "tool":
        return tool(span)
    if kind == "task" and "tool.name" in attrs:
        return workflow_tool(span)
    if kind == "task" and attrs.get("gen_ai.operation.name") == "execute_tool":  # the JS instrumentation's tools
        return _class_named_tool(span)
    if kind == "handoff":  # the openai-agents instrumentation's handoff span (`concierge → unknown.handoff`)
        return genai.handoff(span)
    if _is_llm(attrs):
        if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
            return genai.llm(span)
        return llm(span)
    if kind == "task" and (speaker := _speaker(attrs)):
        return ChainFacts(speaker=speaker)
    return None


# the agent a LlamaIndex workflow step is for, in the step's event as JSON (read without parsing the whole event)
_SPEAKER = re.compile(r'"current_agent_name": ?("(?:[^"\\]|\\.){1,256}")')


def _speaker(attrs: dict[str, Any]) -> str | None:
    """The agent an agent workflow's step is for, as the LlamaIndex instrumentation writes the step's event in its
    JSON input or output (`{"current_agent_name": "bookings", ...}`)."""
    for key in ("traceloop.entity.input", "traceloop.entity.output"):
        value = attrs.get(key)
        found = _SPEAKER.search(value) if isinstance(value, str) else None
        if found and isinstance(name := msg.loads(found.group(1)), str) and (named := text(name)):
            return named
    return None


def _is_llm(attrs: dict[str, Any]) -> bool:
    return "llm.request.type" in attrs or has_any(attrs, _FLAT_FIRST)


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    name = text(first(attrs, "gen_ai.agent.name", "agno.team.name", "traceloop.entity.name", "traceloop.workflow.name"))
    output = msg.loads(attrs.get("traceloop.entity.output"))
    return RunFacts(
        agent_name=name or span.name.removesuffix(".agent").removesuffix(".workflow") or None,
        fallback_input=_entity_input_text(attrs.get("traceloop.entity.input")),
        output=output if isinstance(output, str) and output else None,
    )


def crew(span: Span) -> RunFacts | ChainFacts:
    """A CrewAI crew's span, the crew's invocation with its answer; or a task's, a step whose input is the request
    it was given."""
    attrs = span.attributes
    if _TASK in attrs:
        return ChainFacts(input=text(attrs[_TASK]))
    facts = genai.agent(span) if attrs.get("gen_ai.operation.name") == "invoke_agent" else RunFacts()
    facts.output = facts.output or text(attrs[_CREW_RESULT])
    return facts


def tool(span: Span) -> ToolFacts:
    """A tool span: arguments and result as `traceloop.entity.*`, else (the openai-agents instrumentation) as
    GenAI's `gen_ai.tool.call.arguments` / `.result`. A LangChain tool's output is the ToolMessage it returned,
    the best witness of the call (its tool's name and call id, where the JS instrumentation names the span after
    the tool's class), or a LangGraph `Command` holding it that routes the graph to the agent that acts next.
    A tool that raised records the exception and no output, its status left as it was."""
    attrs = span.attributes
    output = first(attrs, "traceloop.entity.output", "gen_ai.tool.call.result")
    entity_input = attrs.get("traceloop.entity.input")
    failed = is_error(span) or (output is None and raised(span))
    if isinstance(output, str) and output.startswith("status='"):
        output, failed = _execution_result(output, failed)
    call_id = text(attrs.get("gen_ai.tool.call.id"))
    # only an output that holds a LangChain ToolMessage is parsed here (a scan is cheaper than a parse)
    doc = msg.loads(output) if isinstance(output, str) and output[:1] == "{" and "ToolMessage" in output else None
    routed = langgraph.command(doc)
    message, asker = langgraph.answered(routed[1], call_id) if routed else (langgraph.tool_message(doc), None)
    if message is not None:
        output = message.get("content")
        failed = failed or message.get("status") == "error"
    named = text(first(attrs, "gen_ai.tool.name", "traceloop.entity.name")) or span.name.removesuffix(".tool")
    return ToolFacts(
        name=(text(message.get("name")) if message else None) or named,
        call_id=call_id or (text(message.get("tool_call_id")) if message else None),
        arguments=_entity_arguments(entity_input)
        if entity_input is not None
        else msg.parse_json_maybe(attrs.get("gen_ai.tool.call.arguments")),
        result=msg.result_text(output) if output is not None else None,
        error=failed,
        hands_to=routed[0] if routed else None,
        handed_from=asker,
    )


def _class_named_tool(span: Span) -> ToolFacts:
    """A LangChain.js tool's span, named after the tool's class (`execute_tool DynamicStructuredTool`): which tool
    ran stands only in the ToolMessage it returned; a tool that raised returned none, and its call is uncertain."""
    facts = tool(span)
    facts.unnamed = facts.name == span.attributes.get("traceloop.entity.name") and "gen_ai.tool.name" not in (
        span.attributes
    )
    return facts


def workflow_tool(span: Span) -> ToolFacts:
    """An agent workflow's tool step: the call as the model asked it, and the step's outcome where it recorded one
    (`{"tool_id": ..., "tool_output": {"raw_output": ..., "is_error": ...}}`)."""
    attrs = span.attributes
    outcome = msg.loads(attrs.get("traceloop.entity.output"))
    outcome = outcome if isinstance(outcome, dict) else {}
    output = outcome.get("tool_output")
    output = output if isinstance(output, dict) else {}
    result = output.get("raw_output")
    return ToolFacts(
        name=text(attrs["tool.name"]) or span.name,
        call_id=text(outcome.get("tool_id")),
        arguments=msg.parse_json_maybe(attrs.get("tool.arguments")),
        result=msg.result_text(result) if result is not None else None,
        error=is_error(span) or output.get("is_error") is True,
    )


def _execution_result(output: str, failed: bool) -> tuple[str | None, bool]:
    """Agno's execution result written as its repr: what the tool returned (a literal, else as written; none
    for a failure) and whether it failed (status `failure`, or an error beside it)."""
    found = _EXECUTION.match(output)
    if found is None:
        return output, failed
    status, result, error = found.groups()
    if status == "failure" or error != "None":
        return None, True
    try:
        value = literal_eval(result)
    except (ValueError, SyntaxError):
        return result, failed
    return (None if value is None else str(value)), failed


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    prompts: dict[int, dict[str, Any]] = {}
    completions: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        match = _FLAT.match(key)
        if match:
            side = prompts if match.group(1) == "prompt" else completions
            side.setdefault(int(match.group(2)), {})[match.group(3)] = value
    outputs = _flat_messages(completions)
    finish = finish_reason(first(attrs, *FINISH_REASON_KEYS))
    finish = finish or next((text(c.get("finish_reason")) for _, c in sorted(completions.items())), None)
    return LLMFacts(
        model=text(first(attrs, "gen_ai.response.model", "gen_ai.request.model")),
        provider=text(first(attrs, "gen_ai.provider.name", "gen_ai.system")),
        input_tokens=integer(first(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
        output_tokens=integer(first(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")),
        input_messages=_flat_messages(prompts),
        output_messages=outputs,
        finish_reason=finish,
    )


def _flat_messages(items: dict[int, dict[str, Any]]) -> list[msg.Message]:
    out = []
    for _, fields in sorted(items.items()):
        calls: dict[int, dict[str, Any]] = {}
        for key, value in fields.items():
            if key.startswith("tool_calls."):
                index, _, field = key[len("tool_calls.") :].partition(".")
                if index.isdigit():
                    calls.setdefault(int(index), {})[field] = value
        tool_calls = [msg.tool_call(c.get("id"), c.get("name"), c.get("arguments")) for _, c in sorted(calls.items())]
        role = text(fields.get("role")) or "assistant"
        extra = {"tool_call_id": text(fields.get("tool_call_id"))} if role == "tool" else {}
        content = fields.get("content")
        if isinstance(content, str) and content.lstrip()[:2] == "[{":
            content = content_text(msg.loads(content)) or content
        out.append(msg.message(role, content_text(content) or None, tool_calls, **extra))
    return out


def _entity_arguments(value: Any) -> Any:
    """`{"args": [...], "kwargs": {...}}` -> the keyword arguments (or the positional ones)."""
    doc = msg.loads(value)
    if not isinstance(doc, dict) or not ({"args", "kwargs"} & doc.keys()):
        return msg.parse_json_maybe(value)
    args, kwargs = doc.get("args") or [], doc.get("kwargs") or {}
    if kwargs or not args:
        return kwargs
    return args[0] if len(args) == 1 else args


def _entity_input_text(value: Any) -> str | None:
    arguments = _entity_arguments(value)
    while isinstance(arguments, list) and len(arguments) == 1:
        arguments = arguments[0]
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict):
        strings = [v for v in arguments.values() if isinstance(v, str)]
        return strings[0] if len(strings) == 1 else None
    return None


DIALECT = Dialect(
    name="traceloop",
    priority=40,
    marks=frozenset({"traceloop.span.kind", "llm.request.type", _CREW_RESULT, *_FLAT_FIRST}),
    read=read,
    blob_prefixes=("gen_ai.prompt.", "gen_ai.completion."),
    transfer_names=(r"transfer_(back_)?to_",),  # LangGraph's supervisor and swarm handoff tools
)
