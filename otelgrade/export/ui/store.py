"""The recent runs the grades page shows: each graded run's trajectory and grades, in bounded memory.

A `Sink` of the exporter (grades) and the grading's `on_run` hook (trajectories). When more than `keep` runs
are held, the oldest run without a failing grade goes first; failing runs go only when nothing else is left.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from otelgrade.core.results import LEVELS, OUTCOMES, Grade, Outcome
from otelgrade.core.trajectory import Conversation, LLMCall, ToolCall, Trajectory, conversation_key, replaced

RunKey = tuple[str, str]  # (trace_id, span_id)
ORDERS = ("failing", "newest")
MAX_LIMIT = 5000


@dataclass
class Run:
    """One graded run: its rebuilt trajectory (None once only late grades of an evicted run arrived)."""

    trace_id: str
    span_id: str
    trajectory: Trajectory | None = None
    grades: list[Grade] = field(default_factory=list)

    @property
    def failing(self) -> bool:
        return any(g.outcome == "fail" for g in self.grades)


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation, as its page lists it (the run itself may be held apart, or not at all)."""

    trace_id: str
    span_id: str
    input: str | None
    output: str | None
    tools: list[str]
    start_time: str | None


SUPERSEDED_KEPT = 100  # a conversation's grades of earlier revisions kept for its JSON, the latest


@dataclass
class HeldConversation:
    """A graded conversation: its turns as of its latest revision, and its grades. Its id is its application's,
    within `scope` (`conversations.scope_attribute`)."""

    conversation_id: str
    turns: list[Turn] = field(default_factory=list)
    grades: list[Grade] = field(default_factory=list)
    scope: str | None = None
    superseded: list[Grade] = field(default_factory=list)  # the grades of its earlier revisions, the latest kept

    def copy(self) -> HeldConversation:
        return HeldConversation(
            self.conversation_id, list(self.turns), list(self.grades), self.scope, list(self.superseded)
        )

    @property
    def failing(self) -> bool:
        return any(g.outcome == "fail" for g in self.grades)

    @property
    def graded_at(self) -> float:
        return max((g.time_unix for g in self.grades), default=0.0)


@dataclass(frozen=True)
class GradeQuery:
    """Which grades to list and in what order: the page's and the API's query parameters."""

    suite: str | None = None
    grader: str | None = None
    outcome: Outcome | None = None
    service: str | None = None
    agent: str | None = None
    level: str | None = None  # `run` or `conversation`
    conversation: str | None = None  # a conversation's id: its grades and its turns' (`scope` narrows it)
    scope: str | None = None
    order: str = "failing"  # failing first (then errors), newest first within each; or "newest"
    limit: int = 200

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> GradeQuery:
        """Read query parameters; an empty value means "any". Raises ValueError naming a bad parameter."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ValueError(f"unknown parameter {unknown[0]!r}; the filters are {', '.join(sorted(known))}")
        given = {key: value for key, value in params.items() if value != ""}
        outcome = given.get("outcome")
        if outcome is not None and outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        level = given.get("level")
        if level is not None and level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
        order = given.get("order", "failing")
        if order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
        try:
            limit = int(given.get("limit", 200))
        except ValueError:
            raise ValueError(f"limit must be a whole number, not {given['limit']!r}") from None
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        return cls(
            suite=given.get("suite"),
            grader=given.get("grader"),
            outcome=outcome,
            service=given.get("service"),
            agent=given.get("agent"),
            level=level,
            conversation=given.get("conversation"),
            scope=given.get("scope"),
            order=order,
            limit=limit,
        )

    def accepts(self, grade: Grade) -> bool:
        wanted = (
            (self.suite, grade.suite),
            (self.grader, grade.grader),
            (self.outcome, grade.outcome),
            (self.service, grade.service_name),
            (self.agent, grade.agent_name),
            (self.level, grade.level),
            (self.conversation, grade.conversation_id),
            (self.scope, grade.conversation_scope),
        )
        return all(want is None or want == have for want, have in wanted)


_URGENCY = {"fail": 0, "error": 1}


def select(grades: Iterable[Grade], query: GradeQuery) -> tuple[list[Grade], int]:
    """The grades the query asks for, in its order and cut to its limit, and how many matched in all."""
    matched = [g for g in grades if query.accepts(g)]
    matched.sort(key=lambda g: g.time_unix, reverse=True)
    if query.order == "failing":
        matched.sort(key=lambda g: _URGENCY.get(g.outcome, 2))  # stable: newest first within each group
    return matched[: query.limit], len(matched)


class RunStore:
    """Thread-safe: written by the grading thread and judge callbacks, read by the page's handlers."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._passing: OrderedDict[RunKey, Run] = OrderedDict()  # oldest first
        self._failing: OrderedDict[RunKey, Run] = OrderedDict()
        self._conversations: OrderedDict[str, HeldConversation] = OrderedDict()  # least recently graded first
        self._lock = threading.Lock()

    def add_run(self, trajectory: Trajectory) -> None:
        """Hold a run about to be graded (Grading's `on_run`); of a conversation, its turns."""
        if isinstance(trajectory, Conversation):
            turns = [
                Turn(r.trace_id, r.span_id, r.input, r.output, [c.name for c in r.tool_calls], r.start_time)
                for r in trajectory.runs
            ]
            with self._lock:
                self._conversation(trajectory.conversation_id or "", trajectory.conversation_scope).turns = turns
            return
        self.hold(slim(trajectory))

    def hold(self, held: Trajectory) -> None:
        """Hold a run already cut to what the page keeps (`slim`)."""
        with self._lock:
            self._run((held.trace_id, held.span_id)).trajectory = held

    def list_run(self, trace_id: str, span_id: str) -> None:
        """List a run whose trajectory another process holds (a grading worker): `fetch` brings it in when its page
        is opened."""
        with self._lock:
            self._run((trace_id, span_id)).trajectory = None

    def fill(self, held: Trajectory) -> None:
        """Give a run listed without its trajectory (a grading worker holds it) the one that worker sent for its page;
        a run no longer listed is not held again."""
        with self._lock:
            run = self._passing.get((held.trace_id, held.span_id)) or self._failing.get((held.trace_id, held.span_id))
            if run is not None and run.trajectory is None:
                run.trajectory = held

    async def fetch(self, trace_id: str) -> None:
        """Bring in the trajectories of a trace's runs that another process holds, before its page is shown (here
        every run is held in this process)."""

    def write(self, grades: Sequence[Grade]) -> None:
        with self._lock:
            for grade in grades:
                if grade.level == "conversation":
                    self._conversation_grade(grade)
                    continue
                key = (grade.trace_id, grade.span_id)
                run = self._run(key)
                if grade.revision > 1:  # a re-grade supersedes the grade it revises
                    same = (grade.suite, grade.grader, grade.call_span_id)
                    run.grades = [g for g in run.grades if (g.suite, g.grader, g.call_span_id) != same]
                run.grades.append(grade)
                failing = any(g.outcome == "fail" for g in run.grades)
                if failing and key in self._passing:
                    self._failing[key] = self._passing.pop(key)
                elif not failing and key in self._failing:
                    self._passing[key] = self._failing.pop(key)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def grades(self) -> list[Grade]:
        """Every grade held, of runs and of conversations, in no particular order."""
        with self._lock:
            of_runs = [g for runs in (self._passing, self._failing) for run in runs.values() for g in run.grades]
            return of_runs + [g for c in self._conversations.values() for g in c.grades]

    def conversations(self) -> list[HeldConversation]:
        """The graded conversations held, failing first, most recently graded first within each."""
        with self._lock:
            held = [c.copy() for c in self._conversations.values()]
        held.sort(key=lambda c: c.graded_at, reverse=True)
        return sorted(held, key=lambda c: not c.failing)

    def conversation(self, conversation_id: str, scope: str | None = None) -> HeldConversation | None:
        """The conversation of this id within `scope`; without a scope, the only one held of this id, if only one
        is."""
        with self._lock:
            c = self._conversations.get(conversation_key(scope, conversation_id))
            if c is None and scope is None:
                of_id = [c for c in self._conversations.values() if c.conversation_id == conversation_id]
                c = of_id[0] if len(of_id) == 1 else None
            return None if c is None else c.copy()

    def scopes(self, conversation_id: str) -> list[str | None]:
        """The scopes of the conversations held with this id (two applications may use one id)."""
        with self._lock:
            return [c.scope for c in self._conversations.values() if c.conversation_id == conversation_id]

    def runs(self, trace_id: str) -> list[Run]:
        """The held runs of one trace, in the order they started (outer runs before nested ones)."""
        with self._lock:
            found = [
                Run(run.trace_id, run.span_id, run.trajectory, list(run.grades))
                for runs in (self._passing, self._failing)
                for run in runs.values()
                if run.trace_id == trace_id
            ]
        return sorted(found, key=lambda r: (r.trajectory is None, (r.trajectory and r.trajectory.start_time) or ""))

    def __len__(self) -> int:
        with self._lock:
            return len(self._passing) + len(self._failing)

    def _conversation(self, conversation_id: str, scope: str | None) -> HeldConversation:
        key = conversation_key(scope, conversation_id)
        held = self._conversations.pop(key, None)
        if held is None:
            while len(self._conversations) >= self.keep:
                self._conversations.popitem(last=False)
            held = HeldConversation(conversation_id, scope=scope)
        self._conversations[key] = held  # the most recently graded last
        return held

    def _conversation_grade(self, grade: Grade) -> None:
        held = self._conversation(grade.conversation_id or "", grade.conversation_scope)
        if grade.revision > 1:  # the conversation re-opened and was graded again: this supersedes the earlier grade
            same = (grade.suite, grade.grader)
            held.superseded = [*held.superseded, *(g for g in held.grades if (g.suite, g.grader) == same)]
            del held.superseded[:-SUPERSEDED_KEPT]
            held.grades = [g for g in held.grades if (g.suite, g.grader) != same]
        held.grades.append(grade)

    def _run(self, key: RunKey) -> Run:
        run = self._passing.get(key) or self._failing.get(key)
        if run is None:
            # Make room first, so a new run is always held: its failing grade comes after it.
            while len(self._passing) + len(self._failing) >= self.keep:
                (self._passing or self._failing).popitem(last=False)
            run = self._passing[key] = Run(*key)
        return run


ATTRIBUTE_CHARS = 2000
"""How much of one text (an attribute's value, a message, a tool call's arguments or result) the page keeps."""
RUN_CHARS = 64 * 1024
"""How much text of one run the page keeps in all: runs are kept by count, so no run may be large."""
RUN_ITEMS = 100
"""How many messages, LLM calls and tool calls of one run the page keeps (the first and the last ones)."""


def slim(trajectory: Trajectory) -> Trajectory:
    """The run as the page shows it, at most about `RUN_CHARS` of text: without each LLM call's own copy of the
    conversation so far, which grows with the square of the run's length (`messages` holds the conversation
    once), its longest lists cut to their first and last `RUN_ITEMS` around an entry saying how many are not
    kept, and each text cut to `ATTRIBUTE_CHARS` until the run's `RUN_CHARS` are used, after which texts are left
    out (a span can carry megabytes in one value)."""
    t = trajectory
    llm_calls = [
        replaced(c, input_messages=[], output_messages=[]) if c.input_messages or c.output_messages else c
        for c in _ends(t.llm_calls, lambda n: LLMCall(model=f"[{n} LLM call(s) not kept]"))
    ]
    if _kept_whole(t):  # most runs: nothing to cut, so nothing is rebuilt
        kept = {"attributes": dict(t.attributes), "messages": list(t.messages), "tool_calls": list(t.tool_calls)}
        return replaced(trajectory, **kept, llm_calls=llm_calls)
    room = _Room(RUN_CHARS)
    messages = _ends(t.messages, lambda n: {"role": "otelgrade", "content": f"[{n} message(s) not kept]"})
    tools = _ends(t.tool_calls, lambda n: ToolCall(name=f"[{n} tool call(s) not kept]"))
    update: dict[str, Any] = {
        "input": room.cut(t.input),
        "output": room.cut(t.output),
        "error": room.cut(t.error),
        "ground_truth": room.cut(t.ground_truth),
        "attributes": {k: room.cut(v) for k, v in t.attributes.items()},
        "messages": [room.cut(m) for m in messages],
        "tool_calls": [_cut_call(c, room) for c in tools],
        "llm_calls": llm_calls,
    }
    return replaced(trajectory, **update)


def _kept_whole(t: Trajectory) -> bool:
    """Whether `slim` keeps every text and list of the run as it is (none too long, all within `RUN_CHARS`)."""
    if len(t.messages) > RUN_ITEMS or len(t.tool_calls) > RUN_ITEMS:
        return False
    left = RUN_CHARS
    calls = (v for c in t.tool_calls for v in (c.arguments, c.result))
    for value in (t.input, t.output, t.error, t.ground_truth, *t.attributes.values(), *t.messages, *calls):
        left -= _chars(value, left)
        if left < 0:
            return False
    return True


def _chars(value: Any, left: int) -> int:
    """The characters of text in `value` (dicts and lists walked), or more than `left` when `_Room.cut` would cut
    any of it with `left` to spend (a text over `ATTRIBUTE_CHARS`, a list or dict over `RUN_ITEMS`)."""
    if isinstance(value, str):
        return len(value) if len(value) <= ATTRIBUTE_CHARS else left + 1
    if isinstance(value, dict | list):
        if len(value) > RUN_ITEMS:
            return left + 1
        used = 0
        for item in value.values() if isinstance(value, dict) else value:
            used += _chars(item, left - used)
            if used > left:
                return used
        return used
    return 0


def _cut_call(call: ToolCall, room: _Room) -> ToolCall:
    """The tool call with its arguments and result cut; the same call when nothing was cut."""
    arguments, result = room.cut(call.arguments), room.cut(call.result)
    if arguments == call.arguments and result == call.result:
        return call
    return replaced(call, arguments=arguments, result=result)


T = TypeVar("T")


def _ends(items: list[T], not_kept: Callable[[int], T]) -> list[T]:
    """The first and last of `items` around what says how many are not kept, if there are over `RUN_ITEMS`."""
    if len(items) <= RUN_ITEMS:
        return items
    half = RUN_ITEMS // 2
    return [*items[:half], not_kept(len(items) - RUN_ITEMS), *items[-half:]]


class _Room:
    """What is left of one run's text allowance."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.left_out = 0

    def cut(self, value: Any) -> Any:
        """`value` with every text in it cut (dicts and lists walked, their items up to `RUN_ITEMS`)."""
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, dict):
            return {k: self.cut(v) for k, v in list(value.items())[:RUN_ITEMS]}
        if isinstance(value, list):
            return [self.cut(v) for v in value[:RUN_ITEMS]]
        return value

    def _text(self, text: str) -> str:
        keep = min(len(text), ATTRIBUTE_CHARS, self.chars)
        self.chars -= keep
        if keep == len(text):
            return text
        self.left_out += len(text) - keep
        return f"{text[:keep]}… [{len(text) - keep} more characters not kept]"
