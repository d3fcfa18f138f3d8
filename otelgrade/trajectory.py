"""The `Trajectory`: one agent run as graders see it (field names are a public contract)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class LLMCall(BaseModel):
    model: str | None = None
    provider: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_messages: list[dict[str, Any]] = Field(default_factory=list)
    output_messages: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    step: int = 0
    span_id: str | None = None
    duration_s: float | None = None  # the call span's start to end; None when the call has no span of its own


class ToolCall(BaseModel):
    name: str
    call_id: str | None = None
    arguments: Any = None  # an object when the source gave JSON, else the raw string
    result: str | None = None
    error: bool = False
    step: int = 0
    span_id: str | None = None
    duration_s: float | None = None  # the execution span's start to end; None when no span executed it


Part = Literal["input", "output", "messages", "tool_arguments", "tool_results", "llm_calls"]
PARTS: tuple[Part, ...] = ("input", "output", "messages", "tool_arguments", "tool_results", "llm_calls")


class Trajectory(BaseModel):
    trace_id: str
    span_id: str
    service_name: str | None = None
    agent_name: str | None = None
    environment: str | None = None  # the resource's deployment.environment.name (else deployment.environment)
    source: str = "unknown"
    input: str | None = None
    output: str | None = None
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    duration_s: float | None = None
    llm_calls: list[LLMCall] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    steps: int = 0
    attributes: dict[str, Any] = Field(default_factory=dict)
    ground_truth: Any = None
    parent_span_id: str | None = None  # the enclosing run's span id for a nested run (handoff, sub-agent)
    lacks: list[Part] = Field(default_factory=list)  # parts this trace cannot carry (e.g. content capture off)

    def assistant_texts(self) -> list[str]:
        """The text of every assistant message, oldest first."""
        return [content_text(m.get("content")) for m in self.messages if m.get("role") == "assistant"]


def content_text(content: Any) -> str:
    """Message content as text, "" when it has none: the one rule for graders and the rebuild.

    A string as is; a list of parts (or a single part dict) gives its non-empty text parts joined
    with a space, as letta-evals' extractors join them. A part is a string, or a dict whose `text`
    (else `content`) is a string, unless it is typed as something other than text (`tool_result`,
    `image_url`, ...) and has no `text` key.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and (part.get("type") in _TEXT_TYPES or "text" in part):
                part = part.get("text", part.get("content"))
            if isinstance(part, str) and part:
                texts.append(part)
        return " ".join(texts)
    return str(content)


_TEXT_TYPES = (None, "text", "input_text", "output_text")
