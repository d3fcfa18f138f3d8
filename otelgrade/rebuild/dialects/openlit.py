"""OpenLIT (`openlit.init`): the spans of its scopes `openlit.instrumentation.<library>`.

OpenLIT writes GenAI attribute names, not always with their meaning:
- LangGraph (`...langgraph`): a graph's invoke/stream is `invoke_workflow <graph>` (`gen_ai.workflow.name`),
  the agent system's run; its `gen_ai.output.messages` lists every assistant message of the final state,
  the last one being the answer. Every graph node is `invoke_agent <node>`: a step, never an agent.
- LangChain (`...langchain`), from callbacks: a chain whose name mentions "agent" is `invoke_agent <name>`,
  a compiled agent graph among them; the model node of LangGraph's prebuilt ReAct agent (`agent`) is a
  step. Tool spans hold the tool's input as Python `repr` text in `gen_ai.tool.call.arguments`, the
  ToolMessage's `repr` (`content='...' name=... tool_call_id=...`) in `gen_ai.tool.call.result`, and the
  LangChain run id (a UUID) in `gen_ai.tool.call.id` until the result names the model's call. A tool that
  returns a LangGraph `Command` (a swarm's handoff tool) has its `repr` as the result, whose `goto` says where
  the graph goes next: a handoff the span states.
- Model calls (`chat ...`): GenAI JSON messages, whose inputs drop the assistant's tool calls and the tool
  messages' call ids. The response's tool calls also stand in `gen_ai.tool.name`, `gen_ai.tool.call.id` and
  `gen_ai.tool.call.arguments` (`gen_ai.tool.args` in its OpenAI instrumentation), comma-joined, which OpenLIT
  writes even with content capture off.
- CrewAI (`...crewai`): the crew's kickoff is `invoke_workflow crew`, which lists the crew
  (`gen_ai.crewai.crew.agents`). Each agent's turn runs in a flow of CrewAI's own (its executor), which OpenLIT
  writes as another `invoke_workflow` (no crew, no request on it), with a span per flow method written
  `invoke_agent <method>` and no `gen_ai.agent.name`: steps of the agent's run, never agents. (A span that failed
  keeps only `error.type`: a failed agent is known by its span name, unless that is the `invoke_agent agent`
  OpenLIT writes where it has no role for it (a hierarchical crew's manager), a failed kickoff is a step that
  still holds the request.) A coworker's flow inside a delegation tool's span is that coworker's work, the agent
  the tool's arguments name.
- Agent frameworks' own runs (the OpenAI Agents SDK): an agent's invocation is `invoke_agent <agent>`; each of its
  turns an `invoke_agent` with no agent name (a step); a handoff an `invoke_agent <to>` with
  `gen_ai.agent.source` = the agent it came from, with nothing under it (a handoff the span states).
- AG2 (`...ag2`): every message an agent handles is `execute_task <agent>` claiming `chat` with no model
  (`gen_ai.agent.message_type`): a reply it generates (from its model, its tools or code) is its turn, an agent
  run whose model call is the provider client's span under it; a message sent or received is a step. A reply
  that failed keeps only `error.type` and its name. A group chat is `invoke_workflow <chat>`.
Other libraries' spans (provider SDKs) follow the GenAI conventions, read by `genai.py`.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.span_readers import is_error, text

SCOPE = "openlit.instrumentation."
_CREWAI = "crewai"
_CREW_AGENTS = "gen_ai.crewai.crew.agents"  # on the crew's kickoff only
_SOURCE = "gen_ai.agent.source"  # on the span OpenLIT writes for a handoff: the agent it came from
_REACT_MODEL_NODE = "agent"  # the node of langgraph.prebuilt.create_react_agent that calls the model
_REPLY = "execute_task"  # an AG2 agent's reply (its span claims a model call, or keeps only `error.type` if it failed)
_MESSAGE_TYPE, _GENERATED = "gen_ai.agent.message_type", "generate_reply"  # or `send`, `receive`: steps
_UNNAMED = "invoke_agent agent"  # a CrewAI agent's span where OpenLIT has no role for its name (a crew's manager)
_RUN_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_COMMAND = "Command("
_GOTO = re.compile(r"""goto=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\)$""")
_TOOL_MESSAGE = re.compile(r"""content=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")(?: |$)""")


def read(span: Span) -> Facts | None:
    if not span.scope.startswith(SCOPE):
        return None
    # a span is named `<operation> <name>`; one that failed (a graph run, a tool) may carry no `gen_ai.operation.name`
    op = span.attributes.get("gen_ai.operation.name") or span.name.partition(" ")[0]
    if op == "invoke_workflow":
        return flow_step(span) if _crewai_flow(span) else workflow(span)
    if op == "invoke_agent":
        return agent_or_step(span)
    if op == "execute_tool":
        return tool(span)
    if op in genai.LLM_OPERATIONS:
        return _agent_reply(span, named) if (named := span.name.partition(" ")[0]) != op else llm(span)
    if op == _REPLY:  # a reply that failed keeps only `error.type`: its name says whose it was
        return _turn(span.name.partition(" ")[2])
    return None


def _agent_reply(span: Span, named: str) -> Facts:
    """A span whose name states another operation than the model call its attributes claim (AG2's `execute_task
    <agent>`, an agent generating a reply: from its model, its tools or code, no model named on it): the agent's
    turn, whose model call, if any, is the provider client's span under it. Named for no agent, a model call."""
    agent = text(span.attributes.get("gen_ai.agent.name"))
    if agent is None or named in genai.LLM_OPERATIONS:
        return llm(span)
    return _turn(agent, span.attributes.get(_MESSAGE_TYPE, _GENERATED))


def _turn(agent: str, kind: Any = _GENERATED) -> Facts:
    """An agent generating its reply is its turn, an agent run; a message it sends or receives is a step."""
    if kind != _GENERATED:
        return ChainFacts(f"agent `{agent}` passing a message on ({kind}): a step, not a turn of its own")
    return RunFacts(agent_name=agent or None)


def workflow(span: Span) -> RunFacts:
    """A graph (or top-level chain) run: the agent system's request."""
    attrs = span.attributes
    answers = [m for m in genai.from_genai(msg.as_list(attrs.get("gen_ai.output.messages"))) if m.get("content")]
    return RunFacts(
        agent_name=text(attrs.get("gen_ai.workflow.name")) or span.name.removeprefix("invoke_workflow ") or None,
        input=msg.last_user_text(genai.from_genai(msg.as_list(attrs.get("gen_ai.input.messages")))),
        output=msg.assistant_text(answers[-1:]),
    )


def agent_or_step(span: Span) -> Facts:
    library = span.scope.removeprefix(SCOPE)
    name = text(span.attributes.get("gen_ai.agent.name"))
    if library == "langgraph":
        said = msg.last_user_text(genai.from_genai(msg.as_list(span.attributes.get("gen_ai.input.messages"))))
        return ChainFacts(f"LangGraph node `{name}` (OpenLIT names every node invoke_agent): a step of its run", said)
    if library == "langchain" and name == _REACT_MODEL_NODE:
        return ChainFacts("the model node of a LangGraph ReAct agent: a step of its run, not an agent")
    if (
        library == _CREWAI and name is None and "gen_ai.operation.name" in span.attributes
    ):  # (a failed agent has neither)
        return ChainFacts("a method of CrewAI's agent executor flow (it names no agent): a step of the agent's run")
    source = text(span.attributes.get(_SOURCE))
    if name is not None and source is not None and source != name:
        return TransferFacts(to_agent=name, from_agent=source)
    if name is None and "gen_ai.operation.name" in span.attributes:
        return ChainFacts("an agent's turn (OpenLIT names it invoke_agent with no agent): a step of the agent's run")
    if library == _CREWAI and name is None and span.name == _UNNAMED:
        return RunFacts()  # a failed agent whose role OpenLIT did not put in the span's name: the trace names it
    return genai.agent(span)


def _crewai_flow(span: Span) -> bool:
    """A CrewAI workflow span that is no crew's kickoff (it lists no crew): a flow an agent's turn runs in."""
    return span.scope.endswith(_CREWAI) and _CREW_AGENTS not in span.attributes


def flow_step(span: Span) -> ChainFacts:
    return ChainFacts(
        f"CrewAI's `{span.name.partition(' ')[2]}` flow, in which an agent's turn runs: a step of its run"
    )


def llm(span: Span) -> LLMFacts:
    facts = genai.llm(span)
    if not facts.output_messages:
        calls = _response_tool_calls(span.attributes)
        if calls:
            facts.output_messages = [msg.message("assistant", None, calls)]
    return facts


def _response_tool_calls(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """The response's tool calls from `gen_ai.tool.name` / `.call.id` / `.call.arguments` (or `.args`),
    comma-joined."""
    names = [n.strip() for n in (text(attrs.get("gen_ai.tool.name")) or "").split(",") if n.strip()]
    if not names:
        return []
    ids = [i.strip() for i in (text(attrs.get("gen_ai.tool.call.id")) or "").split(",")]
    joined = attrs.get("gen_ai.tool.call.arguments") or attrs.get("gen_ai.tool.args") or ""
    arguments = msg.loads(f"[{joined}]")
    if not isinstance(arguments, list) or len(arguments) != len(names):
        arguments = [None] * len(names)
    ids = ids if len(ids) == len(names) else [""] * len(names)
    return [msg.tool_call(i or None, n, a) for n, i, a in zip(names, ids, arguments, strict=True)]


def tool(span: Span) -> ToolFacts:
    attrs = span.attributes
    call_id = text(attrs.get("gen_ai.tool.call.id"))
    result = attrs.get("gen_ai.tool.call.result")
    return ToolFacts(
        name=text(attrs.get("gen_ai.tool.name")) or span.name.removeprefix("execute_tool ") or "unknown",
        call_id=None if call_id is None or _RUN_ID.fullmatch(call_id) else call_id,
        arguments=_arguments(attrs.get("gen_ai.tool.call.arguments")),
        result=_tool_message_content(result) if isinstance(result, str) else msg.result_text(result),
        error=is_error(span),
        hands_to=_goto(result),
        description=text(attrs.get("gen_ai.tool.description")),
    )


def _goto(result: Any) -> str | None:
    """The node a tool's result sends the graph to: a LangGraph `Command` written as its `repr`, whose `goto`
    names one node (a handoff tool's, to another agent of the graph)."""
    if not isinstance(result, str) or not result.startswith(_COMMAND):
        return None
    match = _GOTO.search(result)
    return _literal(match.group(1)) if match else None


def _arguments(value: Any) -> Any:
    """JSON arguments, or the Python `repr` of a dict LangChain passes as the tool's input."""
    parsed = msg.parse_json_maybe(value)
    if isinstance(parsed, str) and parsed.lstrip()[:1] in ("{", "["):
        literal = _literal(parsed)
        return parsed if literal is None else literal
    return parsed


def _tool_message_content(value: str) -> str:
    """The content of a ToolMessage written as its `repr`; any other text as it is."""
    match = _TOOL_MESSAGE.match(value)
    content = _literal(match.group(1)) if match else None
    return content if isinstance(content, str) else value


def _literal(value: str) -> Any:
    """A Python literal (`ast.literal_eval`: no code runs), or None."""
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


DIALECT = Dialect(
    name="openlit",
    priority=50,
    marks=frozenset({"gen_ai.application_name", "gen_ai.workflow.name", "telemetry.sdk.name"}),
    # a span that failed keeps its name and little else (no mark, no operation name): its scope says it is OpenLIT's;
    # a model call that failed (`chat <model>`) keeps no attribute at all
    name_prefixes=(
        "execute_tool ",
        "invoke_agent ",
        "invoke_workflow ",
        _REPLY + " ",
        *(f"{op} " for op in sorted(genai.LLM_OPERATIONS)),
    ),
    read=read,
    blobs=frozenset(
        {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.workflow.input", "gen_ai.workflow.output"}
    ),
    transfer_names=(r"transfer_(back_)?to_",),  # LangGraph's supervisor and swarm handoff tools
)
