"""OpenInference (Arize): spans typed by `openinference.span.kind` (AGENT, LLM, TOOL, CHAIN, ...).

LLM messages are flattened (`llm.input_messages.N.message.{role,content,tool_calls.M.tool_call.*}`);
`input.value` / `output.value` often repeat them as JSON, which is preferred when it is a list of
chat messages (the flattened form can drop tool-call arguments). Tool spans carry `tool.name`,
`input.value` (arguments) and `output.value` (result), usually without a call id. Flattened
messages are rebuilt here; the JSON ones are OpenAI chat messages (`messages.from_openai`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import langgraph
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.anthropic_messages import from_anthropic
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts, TransferFacts
from otelgrade.rebuild.span_readers import finish_reason, first, integer, is_error, text

_FLAT = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$")
_CALL = re.compile(r"^tool_calls\.(\d+)\.tool_call\.(.+)$")
_CALLING = "Calling tools:\n"
_OBSERVATION = "Observation:\n"
_DSPY = "openinference.instrumentation.dspy"
_HANDOFF = "handoff to "
_CONTENT = re.compile(r"^contents\.(\d+)\.message_content\.text$")
_SPEAKER_KEY = "current_agent_name="
_SPEAKER = re.compile(r"current_agent_name='([^']{1,128})'")


def read(span: Span) -> Facts | None:
    kind = span.attributes.get("openinference.span.kind")
    if not isinstance(kind, str):
        return None
    kind = kind.upper()
    if kind == "AGENT":
        if langgraph.is_graph_node(span):
            return ChainFacts(f"runs graph node `{span.name}`: a step of its run, not an agent", node=span.name)
        return agent(span)
    if kind == "LLM":
        return llm(span)
    if kind == "TOOL" and span.scope == _DSPY and span.name == "finish.__call__":
        return ChainFacts("DSPy ReAct's built-in `finish` tool: marks the end of the loop, not a tool call")
    if kind == "TOOL" and _is_handoff(span):
        return TransferFacts(to_agent=span.name.removeprefix(_HANDOFF) or None)
    if kind == "TOOL":
        return tool(span)
    if kind == "CHAIN" and span.scope == _DSPY and span.name == "ReAct.forward":
        return _dspy_react(span)
    if kind == "CHAIN":
        return ChainFacts(node=span.name if langgraph.is_graph_node(span) else None, speaker=_speaker(span))
    return None


def _speaker(span: Span) -> str | None:
    """The agent an agent workflow's step is for, as LlamaIndex's workflow events say it in the step's input or
    output (`AgentInput(..., current_agent_name='bookings')`)."""
    for key in ("input.value", "output.value"):
        value = span.attributes.get(key)
        if isinstance(value, str) and _SPEAKER_KEY in value and (found := _SPEAKER.search(value)):
            return found.group(1)
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    return RunFacts(
        agent_name=text(first(attrs, "agent.name", "graph.node.id"))
        or langgraph.graph_node(span)
        or _spanned(span)
        or None,
        input=_value_text(attrs, "input", user=True),
        output=_value_text(attrs, "output", user=False),
        handed_off_from=text(attrs.get("graph.node.parent_id")),
    )


def _spanned(span: Span) -> str:
    """The agent a span's name names: smolagents' agent spans are `<agent name>.run`."""
    name = span.name or ""
    if name.endswith(".run") and "smolagents.max_steps" in span.attributes:
        return name.removesuffix(".run")
    return name


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    inputs = _json_messages(attrs, "input") or _flat_messages(_flattened(attrs, "input"))
    outputs = _json_messages(attrs, "output") or _flat_messages(_flattened(attrs, "output"))
    return LLMFacts(
        model=text(first(attrs, "llm.model_name", "gen_ai.response.model", "gen_ai.request.model")),
        provider=text(first(attrs, "llm.provider", "llm.system")),
        input_tokens=integer(attrs.get("llm.token_count.prompt")),
        output_tokens=integer(attrs.get("llm.token_count.completion")),
        input_messages=inputs,
        output_messages=outputs,
        finish_reason=_finish_reason(attrs),
    )


def tool(span: Span) -> ToolFacts:
    attrs = span.attributes
    result, call_id = _tool_output(attrs.get("output.value"))
    named = text(attrs.get("tool.name"))
    return ToolFacts(
        name=named or (span.name or "").removesuffix(".__call__") or "unknown",
        call_id=text(first(attrs, "tool_call.id", "tool.call_id")) or call_id,
        arguments=_unwrapped(msg.parse_json_maybe(attrs.get("input.value"))),
        result=result,
        error=is_error(span),
        hands_to=langgraph.hands_to(span),
        anonymous=not named,
    )


def _unwrapped(arguments: Any) -> Any:
    """Arguments recorded as a call's envelope are the arguments in it: the keyword arguments of `{"kwargs":
    {...}}` (DSPy), the input of `{"input": {...}, "options": ...}` (BeeAI's tool runs)."""
    if isinstance(arguments, dict) and set(arguments) == {"input", "options"} and isinstance(arguments["input"], dict):
        return arguments["input"]
    if (
        isinstance(arguments, dict)
        and set(arguments) <= {"args", "kwargs", "sanitize_inputs_outputs"}  # smolagents' Tool.__call__ adds a flag
        and isinstance(arguments.get("kwargs"), dict)
    ):
        return arguments if arguments.get("args") else arguments["kwargs"]
    return arguments


def _dspy_react(span: Span) -> RunFacts:
    """A DSPy ReAct module call: input.value {"input_args": {...}}, output.value the Prediction's fields."""
    args = msg.loads(span.attributes.get("input.value"))
    out = msg.loads(span.attributes.get("output.value"))
    inputs = args.get("input_args") if isinstance(args, dict) else None
    question = next(iter(inputs.values())) if isinstance(inputs, dict) and len(inputs) == 1 else None
    answers = {k: v for k, v in out.items() if k not in ("trajectory", "reasoning")} if isinstance(out, dict) else {}
    answer = next(iter(answers.values())) if len(answers) == 1 else None
    return RunFacts(agent_name="ReAct", input=text(question), output=text(answer))


def _tool_output(value: Any) -> tuple[str | None, str | None]:
    """A tool's `output.value` as (result text, call id). Frameworks wrap it: LlamaIndex in its ToolOutput
    (`raw_output`, text `blocks`), LangChain in its serialized ToolMessage (`data.content`, `data.tool_call_id`)."""
    doc = msg.loads(value) if isinstance(value, str) and value.startswith("{") else None
    if isinstance(doc, dict):
        data = doc.get("data")
        if doc.get("type") == "tool" and isinstance(data, dict) and "content" in data:
            return msg.result_text(data["content"]), text(data.get("tool_call_id"))
        raw = doc.get("raw_output")
        if isinstance(raw, str) and "blocks" in doc:
            return raw, None
    return msg.result_text(value), None


def _is_handoff(span: Span) -> bool:
    """OpenAI Agents handoffs are TOOL spans named `handoff to X` with no tool name: a control
    transfer, whose tool call is already in the model's response."""
    return "tool.name" not in span.attributes and (span.name or "").startswith(_HANDOFF)


def _json_messages(attrs: dict[str, Any], side: str) -> list[msg.Message]:
    value = attrs.get(f"{side}.value")
    if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
        return []
    doc = msg.loads(value)
    if isinstance(doc, dict):
        listed = doc.get("messages", doc.get("replies"))
        if isinstance(listed, list) and listed and all(isinstance(m, str) for m in listed):
            parsed = [_haystack_message(m) for m in listed]
            return [m for m in parsed if m is not None] if all(parsed) else []
        if isinstance(doc.get("messages"), list) and attrs.get("llm.provider") == "anthropic":
            return from_anthropic(doc["messages"], doc.get("system"))  # the Messages API request, kept whole
        if isinstance(doc.get("messages"), list):
            doc = doc["messages"]
        elif isinstance(doc.get("choices"), list):
            doc = [c.get("message") for c in doc["choices"] if isinstance(c, dict)]
    if isinstance(doc, list) and doc and all(isinstance(m, dict) and "role" in m for m in doc):
        return msg.from_openai(doc)
    return []


def _flattened(attrs: dict[str, Any], side: str) -> dict[int, dict[str, Any]]:
    """The fields of each flattened message of one side (`llm.input_messages.0.message.role` ...), by index:
    read only when the side has no JSON messages, which most spans that flatten them carry as well."""
    prefix = f"llm.{side}_messages."
    out: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith(prefix) and (match := _FLAT.match(key)):
            out.setdefault(int(match.group(2)), {})[match.group(3)] = value
    return out


def _flat_messages(items: dict[int, dict[str, Any]]) -> list[msg.Message]:
    out = []
    for _, fields in sorted(items.items()):
        calls: dict[int, dict[str, Any]] = {}
        contents: dict[int, str] = {}
        for key, value in fields.items():
            match = _CALL.match(key)
            if match:
                calls.setdefault(int(match.group(1)), {})[match.group(2)] = value
                continue
            match = _CONTENT.match(key)
            if match and isinstance(value, str):
                contents[int(match.group(1))] = value
        tool_calls = [
            msg.tool_call(c.get("id"), c.get("function.name"), c.get("function.arguments"))
            for _, c in sorted(calls.items())
        ]
        role = text(fields.get("role")) or "assistant"
        content = text(fields.get("content")) or content_text([v for _, v in sorted(contents.items())]) or None
        extra = {"tool_call_id": text(fields.get("tool_call_id"))} if role == "tool" else {}
        out.append(msg.message(role, content, tool_calls, **extra))
    return _spoken_tool_calls(out)


def _spoken_tool_calls(messages: list[msg.Message]) -> list[msg.Message]:
    """smolagents writes tool calls and results as text messages of its own roles: `tool-call` ("Calling
    tools:" and a Python list of calls) and `tool-response` ("Observation:" and the result). Read them as an
    assistant message with tool calls and tool messages answering them, in order."""
    pending: list[str] = []
    for i, m in enumerate(messages):
        content = m.get("content")
        if m.get("role") == "tool-call" and isinstance(content, str) and content.startswith(_CALLING):
            calls = _python_literal(content[len(_CALLING) :])
            tool_calls = (
                [
                    msg.tool_call(
                        c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments")
                    )
                    for c in calls
                    if isinstance(c, dict)
                ]
                if isinstance(calls, list)
                else []
            )
            pending = [str(c["id"]) for c in tool_calls if c.get("id")]
            messages[i] = msg.message("assistant", None, tool_calls)
        elif m.get("role") == "tool-response" and isinstance(content, str):
            result = content.removeprefix(_OBSERVATION)
            messages[i] = msg.message("tool", result, tool_call_id=pending.pop(0) if pending else None)
    return messages


_ROLE = re.compile(r"<ChatRole\.\w+: ('\w+')>")


def _haystack_message(value: str) -> msg.Message | None:
    """A Haystack ChatMessage as its repr (what the Haystack instrumentor records): role, text, tool calls and
    tool results (`ToolCallResult(result=..., origin=ToolCall(...), error=...)`)."""
    if not value.startswith("ChatMessage(_role="):  # Haystack's dataclass repr (LlamaIndex writes `role=`)
        return None
    try:
        doc = _repr_value(ast.parse(_ROLE.sub(r"\1", value), mode="eval").body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("_content"), list):
        return None
    role, parts = str(doc.get("_role")), doc["_content"]
    texts = [p["text"] for p in parts if isinstance(p, dict) and p.get("__type__") == "TextContent"]
    calls = [
        msg.tool_call(p.get("id"), p.get("tool_name"), p.get("arguments"))
        for p in parts
        if isinstance(p, dict) and p.get("__type__") == "ToolCall"
    ]
    results = [p for p in parts if isinstance(p, dict) and p.get("__type__") == "ToolCallResult"]
    if results:
        origin = results[0].get("origin") or {}
        failed = True if results[0].get("error") else None
        return msg.message("tool", text(results[0].get("result")), tool_call_id=text(origin.get("id")), error=failed)
    return msg.message(role, "".join(texts) or None, calls)


def _repr_value(node: ast.AST) -> Any:
    """A Python repr's value: literals as themselves, `Name(a=..)` calls as {"__type__": "Name", "a": ..}."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return {"__type__": node.func.id, **{k.arg: _repr_value(k.value) for k in node.keywords if k.arg}}
    if isinstance(node, ast.List | ast.Tuple):
        return [_repr_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_repr_value(k) if k else None: _repr_value(v) for k, v in zip(node.keys, node.values, strict=True)}
    return ast.literal_eval(node)


def _python_literal(text_value: str) -> Any:
    try:
        return ast.literal_eval(text_value.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _value_text(attrs: dict[str, Any], side: str, user: bool) -> str | None:
    """`input.value` / `output.value` as text: plain text as is, chat JSON as its user/assistant text."""
    value = attrs.get(f"{side}.value")
    if not isinstance(value, str) or not value:
        return None
    if value.lstrip()[:1] not in ("[", "{"):
        return value
    messages = _json_messages(attrs, side)
    if messages:
        return msg.last_user_text(messages) if user else msg.assistant_text(messages)
    return None


def _finish_reason(attrs: dict[str, Any]) -> str | None:
    """`llm.finish_reason` (what the LangChain and LlamaIndex instrumentors write), or the GenAI conventions' on a
    span that carries both, else the first choice's in an OpenAI response kept whole as `output.value`."""
    written = finish_reason(first(attrs, "llm.finish_reason", "gen_ai.response.finish_reasons"))
    if written is not None:
        return written
    doc = msg.loads(attrs.get("output.value"))
    if isinstance(doc, dict) and isinstance(doc.get("choices"), list):
        for choice in doc["choices"]:
            if isinstance(choice, dict) and isinstance(choice.get("finish_reason"), str):
                return str(choice["finish_reason"])
    return None


DIALECT = Dialect(
    name="openinference",
    priority=10,
    marks=frozenset({"openinference.span.kind"}),
    read=read,
    blobs=frozenset({"input.value", "output.value"}),
    blob_prefixes=("llm.input_messages.", "llm.output_messages."),
    agent_name_keys=("agent.name",),
    answer_tools=frozenset({"final_answer"}),  # smolagents'
    # LangGraph's supervisor and swarm (`transfer_to_<agent>`, `transfer_back_to_<agent>`), CrewAI's delegations
    transfer_names=(r"transfer_(back_)?to_", r"delegate_work_to_coworker$", r"ask_question_to_coworker$"),
)
