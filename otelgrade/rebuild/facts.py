"""The records passed from dialects to assembly: facts of an LLM call, a tool execution or an agent run.

Dialect modules turn spans into these; `runs.py` numbers LLM calls into `Step`s and assembles
trajectories. Messages are already OpenAI-style dicts here (role, content, tool_calls, tool_call_id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild.messages import function_of, parse_json_maybe
from otelgrade.rebuild.react import action


@dataclass(slots=True)
class RequestedCall:
    """A tool call as the model asked for it in one response."""

    name: str
    call_id: str | None
    arguments: Any


@dataclass(slots=True)
class LLMFacts:
    model: str | None = None
    provider: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_messages: list[dict[str, Any]] = field(default_factory=list)
    output_messages: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    failed: bool = False  # the record says the call failed, whatever its span's status
    # a callback's record of the last call made while a span not the call's own was current (earlier calls'
    # records overwritten): how many calls it stands for, and what they asked for, is not on it
    overwritten: bool = False
    # one span for an agent's whole generation, however many model calls it made (a framework's `llm:*` span):
    # how many calls, and what each exchanged, is not on it; the tool calls are, on their own spans
    generation: bool = False


@dataclass(slots=True)
class ToolFacts:
    name: str
    call_id: str | None = None
    arguments: Any = None
    result: str | None = None
    error: bool = False
    hands_to: str | None = None  # the agent the span says this call hands control to (a framework's handoff tool)
    handed_from: str | None = None  # the agent whose response asked for the call, where the span says
    description: str | None = None  # what the tool's definition says it does, where the span records it
    anonymous: bool = False  # the span names no tool (its name stands in): inside another execution, its step
    unnamed: bool = False  # the span names the tool's class, not which tool ran, and nothing on it says which


@dataclass(slots=True)
class RunFacts:
    """An agent-run candidate. `input`/`output`/`messages` are set only where the run span records them."""

    agent_name: str | None = None
    input: str | None = None
    output: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    handed_off_from: str | None = None  # the agent name this run took over from (handoff), if recorded
    fallback_input: str | None = None  # a guess at the request (e.g. a function argument), used last
    calls: list[LLMFacts] = field(default_factory=list)  # model calls recorded on the run span itself (no span each)
    tool_records: list[ToolFacts] = field(default_factory=list)  # tool runs recorded there (name, arguments, result)
    team: str | None = None  # the agent system instance (a group chat) the run is a turn of, where its span says


@dataclass(slots=True)
class ChainFacts:
    """A span that groups work without being an agent (a chain, workflow or step): with no agent span in
    a trace, each topmost one that holds work is a run. `why` says why a span that looks like more is one."""

    why: str = ""
    input: str | None = None  # the request it was given, where the span records one (a graph node's input)
    node: str | None = None  # the graph node it runs, where the span says (a swarm's agent is its graph's node)
    speaker: str | None = None  # the agent a workflow's step says acts next, where it says (an agent workflow's event)


@dataclass(slots=True)
class TransferFacts:
    """A span that states a control transfer (a handoff span, a graph's `goto` to a node): the agent it hands to,
    and from, where the span says."""

    to_agent: str | None = None
    from_agent: str | None = None


Facts = RunFacts | LLMFacts | ToolFacts | ChainFacts | TransferFacts


@dataclass(slots=True)
class Step:
    """One LLM call of a run: its 1-based position and the tool calls its response requested."""

    index: int
    span: Span
    facts: LLMFacts
    calls: list[RequestedCall] = field(default_factory=list)
    failed: bool = False  # the call, or a span wrapping the same call, failed


def requested_calls(messages: list[dict[str, Any]]) -> list[RequestedCall]:
    """The tool calls that assistant messages ask for, in order (as tool calls, else in ReAct's text form)."""
    calls = []
    for message in messages:
        for call in message.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            function = function_of(call)
            name = function.get("name")
            if isinstance(name, str) and name:
                call_id = call.get("id")
                calls.append(
                    RequestedCall(name, str(call_id) if call_id else None, parse_json_maybe(function.get("arguments")))
                )
    if not calls:  # a ReAct agent asks in text
        for message in messages:
            if message.get("role") == "assistant" and (found := action(message.get("content"))) is not None:
                calls.append(RequestedCall(found[1], found[0], found[2]))
    return calls
