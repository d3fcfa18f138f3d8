"""One conversation cannot take the room of the others: `otelgrade serve` grades a conversation as it stands once it
holds `conversations.max_conversation_bytes` of turns (their JSON as grading reads it, not as held compressed) or
`max_conversation_turns` turns (`capped`, counted), and its later turns start anew; before, a conversation of large
turns filled `max_bytes` and the other open conversations were evicted, graded early."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import sdk

SAFE = {
    "name": "whole",
    "level": "conversation",
    "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
}
CAPS = {"settle": "1h", "max_bytes": "3MiB", "max_conversation_bytes": "1MiB", "max_conversation_turns": 1000}
# `max_bytes` alone, smaller than the default `max_conversation_bytes` (32 MiB): a conversation still holds at most a
# quarter of it (before, the large conversation filled it and the 20 others were evicted)
SMALL = {"settle": "1h", "max_bytes": "3MiB"}


@pytest.mark.parametrize("caps", [CAPS, SMALL], ids=["max_conversation_bytes", "max_bytes"])
def test_a_conversation_of_large_turns_is_capped_and_evicts_no_other(serve, caps: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    server = serve({"conversations": caps, "suites": [SAFE]})
    provider, tracer = sdk(server)
    for n in range(20):
        turn(tracer, [], f"question {n}", "answer", [], {"gen_ai.conversation.id": f"small-{n}"})
    big: dict[str, Any] = {"gen_ai.conversation.id": "big"}
    for _ in range(40):  # 40 turns of 100 kB of text that does not compress: 7 MB held compressed
        turn(tracer, [], os.urandom(50_000).hex(), "noted", [], big)
    turn(tracer, [], "That is all.", "Bye.", [], {**big, "otelgrade.conversation.end": True})
    provider.shutdown()
    server.wait_for_metric("otelgrade_conversations_completed_total", {"reason": "ended"}, 1)  # every turn held
    capped = server.metric("otelgrade_conversations_completed_total", {"reason": "capped"})
    held = server.metric("otelgrade_conversations_open")
    evicted = server.metric("otelgrade_conversations_completed_total", {"reason": "evicted"})
    graded_small = [g for g in server.grades() if str(g.get("conversation_id")).startswith("small")]
    assert server.stop() == 0
    print(f"evicted {evicted}, small ones graded early {len(graded_small)}, open {held}, capped {capped}")
    assert evicted == 0 and graded_small == [] and held == 20  # the small conversations are open, none graded early
    assert capped >= 1
    # Each part of the large conversation was graded once, with at most 1 MiB of turns (0.75 MiB held: a quarter of
    # `max_bytes`), about 200 kB a turn.
    parts = [g for g in server.grades() if g["conversation_id"] == "big"]
    assert len(parts) >= 4 and all(g["outcome"] == "pass" for g in parts)
