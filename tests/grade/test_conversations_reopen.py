"""A conversation re-opened again and again (an end marker on every turn, each turn coming after its last grade)
costs per turn what a turn costs: each grade merges only the turns that re-opened it onto the conversation as last
graded, and what it grades is what merging every turn anew gives."""

from __future__ import annotations

import gc
import time
from datetime import UTC, datetime, timedelta

from otelgrade.core.settings import ConversationSettings
from otelgrade.core.trajectory import Conversation, Trajectory
from otelgrade.grade.conversations import MERGED_KEPT, REOPEN_GAP, Conversations, merge
from tests.conversation_turns import turn
from tests.grade.test_conversations import Recorder

END = {"gen_ai.conversation.id": "storm", "otelgrade.conversation.end": True}


def turns(count: int) -> list[Trajectory]:
    """`count` turns of one end-marked conversation, each a copy of one real turn (a lookup and an answer)."""
    rec = Recorder()
    turn(rec.tracer, [], "Where is my order 1007?", "It shipped yesterday.", ["lookup_order"], END)
    [run] = rec.runs()
    start = datetime(2026, 11, 28, tzinfo=UTC)
    return [
        run.model_copy(
            update={
                "trace_id": f"{n:032x}",
                "span_id": f"{n:016x}",
                "start_time": (start + timedelta(seconds=n)).isoformat(),
                "end_time": (start + timedelta(seconds=n + 0.5)).isoformat(),
            }
        )
        for n in range(count)
    ]


def test_a_turn_after_each_grade_costs_the_same_however_many_turns_came_before() -> None:
    runs = turns(900)
    now = [0.0]
    held = Conversations(ConversationSettings(max_conversation_turns=10_000), clock=lambda: now[0])
    cost: list[float] = []
    graded: list[int] = []
    gc.disable()  # what is timed is the holder's work, not collections that grow with everything the test holds
    try:
        for run in runs:
            now[0] += REOPEN_GAP + 0.5  # after the last grade's gap: each turn graded at once
            began = time.process_time()
            done = held.add(run)
            cost.append(time.process_time() - began)
            graded.extend(c.conversation.turns for c in done)
    finally:
        gc.enable()
    assert graded == list(range(1, len(runs) + 1))  # one grade per turn, each with every turn so far
    first, last = sum(cost[:300]), sum(cost[-300:])
    print(f"first 300 turns {first * 1000:.0f} ms, last 300 {last * 1000:.0f} ms")
    assert (
        last < 2.5 * first
    )  # before: 6.8 times (each grade merged every turn anew: 4.6 s of CPU for the first 300, 31 s for the last)


def test_what_is_graded_is_every_turn_merged_anew() -> None:
    runs = turns(40)
    now = [0.0]
    held = Conversations(ConversationSettings(), clock=lambda: now[0])
    graded: list[Conversation] = []
    for run in [*runs[:20], runs[25], *runs[20:25], *runs[26:]]:  # one turn's spans arrive before five earlier ones'
        now[0] += REOPEN_GAP + 0.5
        graded.extend(c.conversation for c in held.add(run))
    assert graded[-1] == merge(runs)
    assert graded[19] == merge(runs[:20]) and graded[20] == merge([*runs[:20], runs[25]])


def test_the_conversations_kept_merged_are_few_counted_and_given_up_first_for_room() -> None:
    runs = turns(1)[0]
    now = [0.0]
    settings = ConversationSettings(max_conversations=10_000)
    held = Conversations(settings, clock=lambda: now[0])
    for n in range(MERGED_KEPT + 5):
        held.add(runs.model_copy(update={"conversation_id": f"c{n}", "trace_id": f"{n:032x}"}))
    kept = [h for h in held.completed.values() if h.merged is not None]
    assert len(kept) == MERGED_KEPT and all(h.merged_cost > 0 for h in kept)
    assert held.nbytes == sum(h.nbytes for h in held.completed.values())
    squeezed = Conversations(settings.model_copy(update={"max_bytes": held.nbytes - 1}), clock=lambda: now[0])
    for n in range(MERGED_KEPT + 5):
        squeezed.add(runs.model_copy(update={"conversation_id": f"c{n}", "trace_id": f"{n:032x}"}))
    assert len(squeezed) == MERGED_KEPT + 5  # none forgotten: what was kept merged made the room
    assert squeezed.nbytes == sum(h.nbytes for h in squeezed.completed.values()) <= held.nbytes - 1
