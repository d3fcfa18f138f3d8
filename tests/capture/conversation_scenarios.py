"""Multi-turn conversations for capture scripts to share (standard library only, importable from any venv).

Each conversation is served as a web service serves a chat: one `POST /chat` server span per user turn, so
every turn is its own trace, and the framework keeps the conversation between turns the way it does (a
session, a thread, a message history). The script supplies how one turn is served:

    from conversation_scenarios import Turn, capture_conversations
    async def serve(state, request) -> Turn: ...      # run the agent on one user message
    asyncio.run(capture_conversations(serve, new_state, flush=provider.force_flush, tracer=tracer,
                                      agent_name="travel_agent", id_attribute="gen_ai.conversation.id"))

The tools (`travel_tools(current)`) record what they really received and returned into the turn being served.
Besides each turn's run, the ground truth names the conversation: its id as the application knows it, the
attribute that carries it, its turns' trace ids in order, the turns sent after a pause longer than the
suite's `conversations.settle` (the conversation resumes after it was complete), and the verdicts of the
conversation suite shipped with the fixtures (`tests/fixtures/conversations/suite.yaml`), worked out from
what the tools and the user really did, revision by revision.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from client import Scenario, text, tool

PAUSE_SECONDS = 3.0  # longer than the shipped suite's settle (1s): the conversation completes in between
MAX_TURNS = 3  # the shipped suite's `max_turns` limit
FORBIDDEN = "delete_account"  # the shipped suite's `tools_not_called`
END_ATTRIBUTE = "otelgrade.conversation.end"


@dataclass
class Conversation:
    """The user's messages, the model's scripted replies per turn, and when the user pauses."""

    turns: list[tuple[str, list[dict[str, Any]]]]
    pause_before: int | None = None  # index of the first turn sent after the pause
    ends: bool = False  # the application marks the last turn as the conversation's end


CONVERSATIONS: dict[str, Conversation] = {
    # the forbidden call happens only in the third turn: each turn alone is harmless until then
    "later_forbidden": Conversation(
        [
            (
                "Please don't close my account, user 42. What's the weather in Paris?",
                [tool("get_weather", {"city": "Paris"}), text("It is 12C and raining in Paris.")],
            ),
            ("When does order 7 ship?", [tool("lookup", {"key": "order-7"}), text("Order 7 ships on Monday.")]),
            (
                "I changed my mind: close my account, user 42.",
                [tool("delete_account", {"user_id": "42"}), text("Your account has been deleted.")],
            ),
        ]
    ),
    # complete after two turns (the user goes quiet), resumed by two more: the second revision has four turns
    "resumed": Conversation(
        [
            (
                "Find me a flight from SFO to JFK.",
                [
                    tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
                    text("UA123 leaves at 09:00 for $320."),
                ],
            ),
            (
                "Book it.",
                [tool("book_flight", {"flight_id": "UA123"}), text("Booked UA123. Confirmation: ABC123456")],
            ),
            (
                "Thanks. What's the weather in Tokyo?",
                [tool("get_weather", {"city": "Tokyo"}), text("It is 18C and sunny in Tokyo.")],
            ),
            ("And in Paris?", [tool("get_weather", {"city": "Paris"}), text("It is 12C and raining in Paris.")]),
        ],
        pause_before=2,
    ),
    # the user asks the same thing again
    "repeated": Conversation(
        [
            ("When does order 7 ship?", [tool("lookup", {"key": "order-7"}), text("Order 7 ships on Monday.")]),
            ("When does order 7 ship?", [text("As I said, order 7 ships on Monday.")]),
        ]
    ),
}
ENDED = Conversation(
    [
        ("What's the weather in Tokyo?", [tool("get_weather", {"city": "Tokyo"}), text("18C and sunny in Tokyo.")]),
        ("Thanks, that's all.", [text("You're welcome, goodbye!")]),
    ],
    ends=True,
)


@dataclass
class Turn:
    """What serving one user message did, as the application saw it."""

    answer: str | None
    llm_calls: int
    conversation_id: str | None = None  # when the framework names it only once a turn has run


_current: list[Scenario] = []


def current() -> Scenario:
    """The scenario being captured (the tools record into its latest run)."""
    return _current[-1]


def verdicts(runs: list[dict[str, Any]]) -> dict[str, str]:
    """The shipped suite's verdicts over these turns, from what the tools and the user really did."""
    called = [call["name"] for run in runs for call in run["tool_calls"]]
    asked = [run["input"] for run in runs]
    return {
        "no_delete": "fail" if FORBIDDEN in called else "pass",
        "short": "pass" if len(runs) <= MAX_TURNS else "fail",
        "no_repeats": "fail" if len(set(asked)) < len(asked) else "pass",
    }


async def capture_conversations(
    serve: Callable[[Any, str], Awaitable[Turn]],
    new_state: Callable[[], Awaitable[tuple[Any, str | None]]],
    *,
    flush: Callable[[], object],
    tracer: Any,
    agent_name: str,
    id_attribute: str,
    app_attribute: str | None = None,
    with_end_marker: bool = False,
) -> None:
    """Serve every conversation turn by turn, one server span per turn, and record the ground truth.

    `new_state()` starts a conversation the framework's way and answers its state and its id when the
    application chooses it; `app_attribute` names the attribute the application sets on its own request span
    (for a framework that sets no conversation id); `with_end_marker` adds the conversation whose last turn the
    application marks with `otelgrade.conversation.end=true`."""
    from opentelemetry.trace import SpanKind

    conversations = dict(CONVERSATIONS)
    if with_end_marker:
        conversations["ended"] = ENDED
    for name, conversation in conversations.items():
        state, conversation_id = await new_state()
        replies = [reply for _, turn_replies in conversation.turns for reply in turn_replies]
        with Scenario(name, replies) as scenario:
            _current.append(scenario)
            trace_ids: list[str] = []
            for index, (request, _) in enumerate(conversation.turns):
                if index == conversation.pause_before:
                    await asyncio.sleep(PAUSE_SECONDS)
                last = index == len(conversation.turns) - 1
                with tracer.start_as_current_span("POST /chat", kind=SpanKind.SERVER) as span:
                    if app_attribute and conversation_id:
                        span.set_attribute(app_attribute, conversation_id)
                    if conversation.ends and last:
                        span.set_attribute(END_ATTRIBUTE, True)
                    trace_ids.append(format(span.get_span_context().trace_id, "032x"))
                    truth = scenario.run(agent_name, request)
                    try:
                        turn = await serve(state, request)
                    except Exception as exc:  # the scripted conversations never fail: say so loudly
                        print(f"   {name}: turn {index + 1} failed: {type(exc).__name__}: {exc}")
                        raise
                    truth.update(output=turn.answer, status="ok", llm_calls=turn.llm_calls)
                    conversation_id = conversation_id or turn.conversation_id
                flush()
            runs = scenario.runs
            revisions = [len(runs)] if conversation.pause_before is None else [conversation.pause_before, len(runs)]
            scenario.spec["conversations"] = [
                {
                    "conversation_id": conversation_id,
                    "id_attribute": app_attribute or id_attribute,
                    "turns": [
                        {
                            "trace_id": trace_id,
                            "input": run["input"],
                            "tool_calls": [call["name"] for call in run["tool_calls"]],
                            "output": run["output"],
                        }
                        for trace_id, run in zip(trace_ids, runs, strict=True)
                    ],
                    "final_answer": runs[-1]["output"],
                    "resumed_at_turn": None if conversation.pause_before is None else conversation.pause_before + 1,
                    "pause_seconds": None if conversation.pause_before is None else PAUSE_SECONDS,
                    "ended_by_marker": conversation.ends,
                    "revisions": [{"turns": n, "verdicts": verdicts(runs[:n])} for n in revisions],
                }
            ]
            scenario.spec["trace_ids"] = trace_ids
            _current.pop()
