"""An end marker on every turn (each turn re-opening the conversation it just ended) costs `otelgrade serve` a grade
per second, not a grade per turn: each grade reads every turn, so a grade per turn grew with the square of the
turns (before: 750 turns took 12.9 s of CPU and 1,500 took 67 s). The last grade still holds every turn, and a run
of another service sent during the storm is graded about as soon as it would be without it."""

from __future__ import annotations

import time
from typing import Any

from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import sdk

TURNS = 400
COUNTED = {"name": "whole", "level": "conversation", "graders": [{"name": "turns", "type": "max_turns", "max": 10**6}]}
OTHER = {"name": "other", "match": {"service.name": "billing"}, "graders": [{"type": "max_tool_calls", "max": 5}]}


def test_a_storm_of_end_markers_grades_the_conversation_once_a_second_with_every_turn(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"conversations": {"max_conversation_turns": 10 * TURNS}, "suites": [COUNTED, OTHER]})
    provider, tracer = sdk(server)
    cpu_before = server.metric("process_cpu_seconds_total")
    ends: dict[str, Any] = {"gen_ai.conversation.id": "storm", "otelgrade.conversation.end": True}
    for number in range(TURNS):
        turn(tracer, [], f"question {number}", "answer", [], ends)
    provider.shutdown()
    sent = time.monotonic()
    other = sdk(server, "billing")
    unrelated = f"{turn(other[1], [], 'my invoice?', 'attached', []):032x}"
    other[0].shutdown()
    while not any(g["trace_id"] == unrelated for g in server.grades()):
        assert time.monotonic() < sent + 120, "the unrelated run was never graded"
        time.sleep(0.02)
    late = time.monotonic() - sent

    def last_rationale() -> str:
        graded = [g for g in server.grades() if g["level"] == "conversation"]
        return graded[-1]["rationale"] if graded else ""

    server.wait_for_metric(
        "otelgrade_conversations_graded_total", None, lambda _: last_rationale().startswith(f"{TURNS} "), timeout=120
    )
    gradings = server.metric("otelgrade_conversations_graded_total")
    cpu = server.metric("process_cpu_seconds_total") - cpu_before
    assert server.stop() == 0
    print(f"{TURNS} end-marked turns: {gradings:.0f} grades, {cpu:.1f} s of CPU; a run of another service {late:.2f} s")
    assert gradings < TURNS / 4  # before: one per turn
    assert late < 5.0  # before: 92 s at 1,500 turns (with `assembly.settle` 200 ms: about 0.25 s)
