"""The `Trajectory`: one agent run as graders see it (field names are a public contract)."""

from __future__ import annotations

from typing import Any, Literal, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

Witness = Literal["request", "execution", "result"]
Part = Literal["input", "output", "messages", "tool_arguments", "tool_results", "llm_calls", "tool_calls"]
PARTS: tuple[Part, ...] = ("input", "output", "messages", "tool_arguments", "tool_results", "llm_calls", "tool_calls")


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
    error: bool = False  # the call failed (it stays a call: the model was asked)
    agent: str | None = None  # the agent whose model this is, in a run that holds several agents' work


class ToolCall(BaseModel):
    name: str
    call_id: str | None = None
    arguments: Any = None  # an object when the source gave JSON, else the raw string
    result: str | None = None
    error: bool = False
    step: int = 0
    span_id: str | None = None
    duration_s: float | None = None  # the execution span's start to end; None when no span executed it
    agent: str | None = None  # the agent whose model asked for it, in a run that holds several agents' work
    witnesses: list[Witness] = Field(default_factory=list)  # the model's request, its execution, its result told back


class Handoff(BaseModel):
    """A control transfer between agents of one request (handoff, transfer, delegation)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_agent: str | None = Field(default=None, alias="from")
    to_agent: str | None = Field(default=None, alias="to")
    step: int = 0
    span_id: str | None = None
    # what showed it: `dialect` (a span states it), `nested_invocation` (the agent ran inside the call),
    # `agent_acted` (the agent it names, or the next one, acted during or right after it), `name_hint`
    decided_by: str | None = None


CallT = TypeVar("CallT", LLMCall, ToolCall)


class Unread(BaseModel):
    """Spans of one instrumentation scope under a run that carry an AI instrumentation's marks but that no
    dialect understood: the run lacks what they would hold."""

    scope: str
    spans: int
    names: list[str] = Field(default_factory=list)  # a few of their span names

    def describe(self) -> str:
        shown = ", ".join(f"`{n}`" for n in self.names)
        return f"scope `{self.scope}`: {self.spans} span(s) not understood, such as {shown}"


class Disagreement(BaseModel):
    """Witnesses of a run that disagree where no rule reconciles them (`rebuild.consistency`): what they say, and
    the parts the run therefore lacks. `reason` is one of a few fixed words (a metric label)."""

    reason: str
    detail: str
    lacks: list[Part] = Field(default_factory=list)

    def describe(self) -> str:
        return f"{self.reason}: {self.detail}"


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
    own_run: bool = True  # one agent's own invocation (False: a request spanning agents under a workflow span)
    agents: list[str] = Field(default_factory=list)  # the agents whose work the run holds, the entry agent first
    handoffs: list[Handoff] = Field(default_factory=list)
    lacks: list[Part] = Field(default_factory=list)  # parts this trace cannot carry (e.g. content capture off)
    unread: list[Unread] = Field(default_factory=list)  # spans under the run that no dialect understood
    disagreements: list[Disagreement] = Field(default_factory=list)  # witnesses that contradict each other
    conversation_id: str | None = None  # the conversation the run is a turn of, when its spans name one
    # whose id it is: the value of `conversations.scope_attribute` (service.name by default); two applications'
    # conversations of the same id are two conversations
    conversation_scope: str | None = None
    ends_conversation: bool = False  # the run carries the explicit end marker (`otelgrade.conversation.end`)
    _requests_seen: tuple[int, int, bool] | None = PrivateAttr(default=None)  # (calls list id, length, answer)

    @property
    def conversation_key(self) -> str | None:
        """The conversation the run is a turn of, as one string (its scope and id), None when it names none."""
        return None if self.conversation_id is None else conversation_key(self.conversation_scope, self.conversation_id)

    def own_calls(self, calls: list[CallT]) -> list[CallT]:
        """The calls the run's own agent made: in a request of several agents, leaves out its workers' (the GenAI
        conventions count an agent's own tool calls); in a run of one agent, every call."""
        return [c for c in calls if c.agent is None or c.agent == self.agent_name]

    def one_witness(self, call: ToolCall) -> Witness | None:
        """The one witness that shows a call of this run, when only one does and the run shows the model's
        requests at all (with content capture off, executions are all there is)."""
        if len(call.witnesses) != 1 or not self._shows_requests():
            return None
        return call.witnesses[0]

    def _shows_requests(self) -> bool:
        """Whether any tool call shows the model's request: found once per list of calls, since it is asked of each
        call (a run of 10,000 calls asked it 10,000 times over all of them: 14 s)."""
        calls = self.tool_calls
        seen = self._requests_seen
        if seen is None or seen[:2] != (id(calls), len(calls)):
            seen = (id(calls), len(calls), any("request" in c.witnesses for c in calls))
            self._requests_seen = seen
        return seen[2]

    def assistant_texts(self) -> list[str]:
        """The text of every assistant message, oldest first."""
        return [content_text(m.get("content")) for m in self.messages if m.get("role") == "assistant"]


class Conversation(Trajectory):
    """A whole conversation as one trajectory, for `level: conversation` suites: every turn's messages, model and
    tool calls in order (steps numbered across turns), the first turn's request as `input`, the last turn's answer
    as `output`, the last turn's trace and span ids (where its grades attach), and the turns themselves."""

    turns: int = 0
    runs: list[Trajectory] = Field(default_factory=list)  # the turns, oldest first


# What instrumentations write in place of content they were told to hide (OpenInference's hide settings): the
# content is absent, as with capture off, never text to grade.
REDACTED = frozenset({"__REDACTED__", "[REDACTED]", "<redacted>"})


def conversation_key(scope: str | None, conversation_id: str) -> str:
    """A conversation's identity, its scope and id, as one string that no other pair makes."""
    return conversation_id if scope is None else f"{len(scope)}:{scope}:{conversation_id}"


def conversation_path(conversation_id: str | None, scope: str | None = None) -> str:
    """A conversation's page on the grades page: its id in the path, its scope (whose id it is) in the query."""
    where = "" if scope is None else f"?scope={quote(scope, safe='')}"
    return f"/conversations/{quote(conversation_id or '', safe='')}{where}"


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
        return "" if content in REDACTED else content
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


class NotCaptured(Exception):
    """A grader read a part of a run that its trace does not carry (`Trajectory.lacks`)."""

    def __init__(self, part: str) -> None:
        super().__init__(part)
        self.part = part


_GUARDED = frozenset({"input", "output", "messages", "llm_calls", "tool_calls"})


class LackingTrajectory(Trajectory):
    """A run whose trace lacks some parts, as graders see it: reading a lacking part raises `NotCaptured`, so a
    grader never gives a verdict from what was not read, whether or not it declared what it reads."""

    def __getattribute__(self, name: str) -> Any:
        if name in _GUARDED and name in object.__getattribute__(self, "__dict__")["lacks"]:
            raise NotCaptured(name)
        return super().__getattribute__(name)


class LackingConversation(Conversation, LackingTrajectory):
    """A conversation some of whose turns lack parts, as graders see it."""


ModelT = TypeVar("ModelT", bound=BaseModel)


def replaced(model: ModelT, **changes: Any) -> ModelT:
    """`model.model_copy(update=changes)` at a fraction of its cost, for copies made per run and per call: the
    values are not validated (as with `model_copy`), the copy is shallow, `changes` count as set."""
    copy = type(model).__new__(type(model))
    extra, private = model.__pydantic_extra__, model.__pydantic_private__
    object.__setattr__(copy, "__dict__", {**model.__dict__, **changes})
    object.__setattr__(copy, "__pydantic_fields_set__", model.__pydantic_fields_set__ | changes.keys())
    object.__setattr__(copy, "__pydantic_extra__", None if extra is None else dict(extra))
    object.__setattr__(copy, "__pydantic_private__", None if private is None else dict(private))
    return copy


def guarded(trajectory: Trajectory) -> Trajectory:
    """The run as graders see it: `LackingTrajectory` when its trace lacks a part a field holds."""
    if _GUARDED.isdisjoint(trajectory.lacks) or isinstance(trajectory, LackingTrajectory):
        return trajectory
    kind = LackingConversation if isinstance(trajectory, Conversation) else LackingTrajectory
    return kind.model_construct(trajectory.model_fields_set, **trajectory.__dict__)
