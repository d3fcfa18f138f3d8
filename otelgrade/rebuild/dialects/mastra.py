"""Mastra's observability export: GenAI-convention spans, with the run's request and answer on the agent span
in Mastra's own attributes (`mastra.agent_run.input`: text or chat messages; `mastra.agent_run.output`:
`{"text": ...}`). Model and tool spans are plain GenAI conventions, left to `genai.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import Facts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.span_readers import text

_TYPE = "mastra.span.type"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    kind = attrs.get(_TYPE)
    if kind == "workflow_run" and span.parent_id is None:
        return _network(attrs)
    if kind == "workflow_step":
        return _routed(attrs)
    if kind != "agent_run":
        return None
    run = genai.agent(span)
    request = attrs.get("mastra.agent_run.input")
    messages = msg.from_openai(msg.as_list(request)) if isinstance(request, str) and request[:1] == "[" else []
    answer = msg.loads(attrs.get("mastra.agent_run.output"))
    return replace(
        run,
        input=run.input
        or (msg.last_user_text(messages) if messages else request if isinstance(request, str) else None),
        output=run.output or (answer.get("text") if isinstance(answer, dict) else None),
    )


def _network(attrs: dict[str, Any]) -> RunFacts | None:
    """An agent network's loop (its state, given and returned, names the primitive its routing chose:
    `primitiveType`, `primitiveId`): the request, its task and, once complete, its result. The network's own agent
    is named on none of its spans."""
    given = msg.loads(attrs.get("mastra.workflow_run.input"))
    result = msg.loads(attrs.get("mastra.workflow_run.output"))
    if not (isinstance(given, dict) and "primitiveType" in given):
        return None
    done = isinstance(result, dict) and result.get("isComplete")
    return RunFacts(input=text(given.get("task")), output=text(result.get("result")) if done else None)


def _routed(attrs: dict[str, Any]) -> ToolFacts | TransferFacts | None:
    """A network's step that runs what its routing chose (its input is the routing's decision: `primitiveType`,
    `primitiveId` and the `prompt` it gives): a tool, a call of the request (arguments: the prompt's JSON; its
    name, call id and result in the step's output), or an agent, to which the network hands the request."""
    given = msg.loads(attrs.get("mastra.workflow_step.input"))
    if not (isinstance(given, dict) and "prompt" in given and isinstance(given.get("primitiveId"), str)):
        return None
    if given.get("primitiveType") == "agent":
        return TransferFacts(to_agent=given["primitiveId"])
    done = msg.loads(attrs.get("mastra.workflow_step.output"))
    if given.get("primitiveType") != "tool" or not isinstance(done, dict):
        return None
    return ToolFacts(
        name=text(done.get("toolName")) or given["primitiveId"],
        call_id=text(done.get("toolCallId")),
        arguments=msg.parse_json_maybe(given["prompt"]),
        result=msg.result_text(done.get("result")),
    )


DIALECT = Dialect(
    name="mastra",
    priority=90,
    marks=frozenset({_TYPE}),
    read=read,
    blobs=frozenset({"mastra.agent_run.input", "mastra.agent_run.output"}),
    blob_prefixes=("mastra.model_step.", "mastra.model_generation.", "mastra.metadata."),
)
