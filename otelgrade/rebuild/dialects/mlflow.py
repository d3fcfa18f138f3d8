"""MLflow Tracing, its default span schema: spans typed by `mlflow.spanType` (AGENT, CHAT_MODEL, LLM, TOOL,
CHAIN, ...), every value JSON-encoded (`"AGENT"`, a function's inputs as an object).

`mlflow.spanInputs` / `mlflow.spanOutputs` hold what the span's function received and returned: for an
`@mlflow.trace` function its arguments by name and its return value; for a model call made by an autolog
integration the request (`{"model", "messages", "tools"}` in OpenAI's shape) and the response (a chat
completion). `@mlflow.trace` tool spans carry no call id; LangChain's autolog writes one (`tool_call_id`), its
graphs and nodes as CHAIN spans and their state's messages in LangChain's form (`type` human/ai/tool), with
LangChain's run metadata (`langgraph.py`: the node a span runs, whom a handoff tool hands to). Token
counts are in `mlflow.chat.tokenUsage`, the model in `mlflow.llm.model`; releases before 3.0 also wrote the
whole conversation to `mlflow.chat.messages`.
In MLflow's GenAI-conventions mode these attributes are replaced by `gen_ai.*` ones, read by `genai.py`.
"""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import content_text
from otelgrade.rebuild import langgraph
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import ChainFacts, Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import finish_reason, first, integer, is_error, text

SPAN_TYPE = "mlflow.spanType"
INPUTS = "mlflow.spanInputs"
OUTPUTS = "mlflow.spanOutputs"
CHAT_MESSAGES = "mlflow.chat.messages"
_GROUPING = frozenset({"CHAIN", "WORKFLOW", "TASK"})


def read(span: Span) -> Facts | None:
    kind = msg.loads(span.attributes.get(SPAN_TYPE))
    if not isinstance(kind, str):
        return None  # `null`: a span of the service's own that MLflow's processor saw
    kind = kind.upper()
    if kind == "AGENT":
        return agent(span)
    if kind in ("CHAT_MODEL", "LLM"):
        return llm(span)
    if kind == "TOOL":
        return tool(span)
    if kind in _GROUPING:
        return ChainFacts(node=span.name if langgraph.is_graph_node(span) else None)
    return None


def agent(span: Span) -> RunFacts:
    attrs = span.attributes
    inputs = msg.loads(attrs.get(INPUTS))
    return RunFacts(
        agent_name=span.name or text(msg.loads(attrs.get("mlflow.spanFunctionName"))),
        input=request_text(inputs),
        output=answer_text(msg.loads(attrs.get(OUTPUTS))),
        fallback_input=lone_text(inputs),
    )


def llm(span: Span) -> LLMFacts:
    attrs = span.attributes
    request, response = msg.loads(attrs.get(INPUTS)), msg.loads(attrs.get(OUTPUTS))
    inputs, outputs = chat_messages(request), response_messages(response)
    if not inputs and not outputs:
        inputs, outputs = _split_conversation(chat_messages(msg.loads(attrs.get(CHAT_MESSAGES))))
    usage = msg.loads(attrs.get("mlflow.chat.tokenUsage"))
    usage = usage if isinstance(usage, dict) else _field(response, "usage") or {}
    return LLMFacts(
        model=text(msg.loads(attrs.get("mlflow.llm.model")) or _field(response, "model") or _field(request, "model")),
        provider=text(msg.loads(attrs.get("mlflow.llm.provider"))),
        input_tokens=integer(first(usage, "input_tokens", "prompt_tokens")),
        output_tokens=integer(first(usage, "output_tokens", "completion_tokens")),
        input_messages=inputs,
        output_messages=outputs,
        finish_reason=_finish_reason(response),
    )


def tool(span: Span) -> ToolFacts:
    """A tool's arguments and result; a LangChain tool returns its ToolMessage (`{"type": "tool", "content",
    "tool_call_id", "status"}`), whose call id LangChain's autolog also writes as `tool_call_id`. A LangGraph tool
    that routes the graph returns a `Command` (`{"goto", "graph", "update": {"messages": [...]}}`): its result is
    the ToolMessage in the update, and it hands control to the node it goes to."""
    attrs = span.attributes
    output = msg.loads(attrs.get(OUTPUTS))
    call_id = text(msg.loads(attrs.get("tool_call_id")))
    goto = _command_goto(output)
    if goto is not None:
        output = _answering(output["update"], call_id)
    message = output if isinstance(output, dict) and output.get("type") == "tool" and "content" in output else {}
    return ToolFacts(
        name=span.name or text(msg.loads(attrs.get("mlflow.spanFunctionName"))) or "unknown",
        call_id=call_id or text(message.get("tool_call_id")),
        arguments=msg.loads(attrs.get(INPUTS)),
        result=msg.result_text(message["content"] if message else attrs.get(OUTPUTS)),
        error=is_error(span) or message.get("status") == "error",
        hands_to=langgraph.hands_to(span) or goto,
    )


def _command_goto(output: Any) -> str | None:
    """The node a LangGraph `Command` a tool returned sends the graph to (one node, named)."""
    if isinstance(output, dict) and isinstance(output.get("goto"), str) and isinstance(output.get("update"), dict):
        return text(output["goto"])
    return None


def _answering(update: dict[str, Any], call_id: str | None) -> Any:
    """The ToolMessage of a Command's update that answers the call (by its id, else the last one)."""
    replies = [m for m in update.get("messages") or () if isinstance(m, dict) and m.get("type") == "tool"]
    return next((m for m in replies if call_id and m.get("tool_call_id") == call_id), replies[-1] if replies else None)


# --- JSON documents of inputs and outputs (also read by langfuse.py) ------------------------------


def chat_messages(doc: Any) -> list[msg.Message]:
    """The chat messages of a request: a list of OpenAI-style or LangChain messages, or an object holding one as
    `messages` (a LangGraph state)."""
    if isinstance(doc, dict):
        doc = doc.get("messages")
    if not isinstance(doc, list) or not doc or not all(isinstance(m, dict) for m in doc):
        return []
    if all("role" in m for m in doc):
        return msg.from_openai(doc)
    if all(m.get("type") in _LANGCHAIN_ROLES for m in doc):
        return [_from_langchain(m) for m in doc]
    return []


_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _from_langchain(message: dict[str, Any]) -> msg.Message:
    """A serialized LangChain message (`type` human/ai/system/tool, tool calls as `{name, args, id}`)."""
    calls = [
        msg.tool_call(c.get("id"), c.get("name"), c.get("args"))
        for c in message.get("tool_calls") or ()
        if isinstance(c, dict)
    ]
    extra = {"tool_call_id": text(message.get("tool_call_id"))} if message["type"] == "tool" else {}
    return msg.message(_LANGCHAIN_ROLES[message["type"]], content_text(message.get("content")) or None, calls, **extra)


def response_messages(doc: Any) -> list[msg.Message]:
    """The messages of a model's answer: a chat completion's choices, one message, a list of them, or text."""
    if isinstance(doc, str):
        return [msg.message("assistant", doc)] if doc else []
    if isinstance(doc, dict) and isinstance(doc.get("choices"), list):
        return msg.from_openai(c.get("message") for c in doc["choices"] if isinstance(c, dict))
    if isinstance(doc, dict) and "role" in doc:
        return msg.from_openai([doc])
    return chat_messages(doc)


def request_text(doc: Any) -> str | None:
    """The user's request in a conversation the inputs hold, if they hold one."""
    return msg.last_user_text(chat_messages(doc))


def answer_text(doc: Any) -> str | None:
    """The answer in an output: text as is, else the last assistant text of the messages it holds."""
    if isinstance(doc, str):
        return doc or None
    texts = [m["content"] for m in response_messages(doc) if m.get("role") == "assistant" and m.get("content")]
    return texts[-1] if texts else None


def lone_text(doc: Any) -> str | None:
    """A function's only text argument (`{"request": "..."}`), a guess at what was asked."""
    if isinstance(doc, str):
        return doc or None
    if isinstance(doc, dict):
        strings = [v for v in doc.values() if isinstance(v, str) and v]
        return strings[0] if len(strings) == 1 else None
    return None


def _split_conversation(messages: list[msg.Message]) -> tuple[list[msg.Message], list[msg.Message]]:
    """A whole exchange (`mlflow.chat.messages`) as (request, answer): the answer is its last assistant message."""
    if messages and messages[-1].get("role") == "assistant":
        return messages[:-1], messages[-1:]
    return messages, []


def _field(doc: Any, key: str) -> Any:
    return doc.get(key) if isinstance(doc, dict) else None


def _finish_reason(response: Any) -> str | None:
    choices = _field(response, "choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return finish_reason(choices[0].get("finish_reason"))
    return None


DIALECT = Dialect(
    name="mlflow",
    priority=14,
    marks=frozenset({SPAN_TYPE}),
    read=read,
    blobs=frozenset({INPUTS, OUTPUTS, CHAT_MESSAGES, "mlflow.chat.tools"}),
)
