"""Conversation ids of any length cost the same: `otelgrade serve` cuts an id longer than 200 characters to 200,
its end a hash of the whole id, so two long ids stay two conversations while log lines, grades and the grades page
stay small (before: a 1 MB id made a 1 MB log line, and 10 KB ids a page of 10 KB a conversation)."""

from __future__ import annotations

import urllib.request
from typing import Any

from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import sdk

SAFE = {
    "name": "whole",
    "level": "conversation",
    "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
}


def test_long_conversation_ids_are_cut_with_a_hash_everywhere_they_show(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"suites": [SAFE]})
    provider, tracer = sdk(server)
    ids = ["x" * 1024**2] + [f"{n:03d}" + "y" * 10_000 for n in range(40)]  # 40 ids alike in their first 183 chars
    for cid in ids:
        marks: dict[str, Any] = {"gen_ai.conversation.id": cid, "otelgrade.conversation.end": True}
        turn(tracer, [], "Close my account.", "Deleted.", ["delete_account"], marks)
    provider.shutdown()
    server.wait_for_metric("otelgrade_conversations_graded_total", None, len(ids), timeout=60)
    with urllib.request.urlopen(server.metrics_url + "/conversations", timeout=10) as response:
        page = response.read()
    assert server.stop() == 0
    graded = {g["conversation_id"] for g in server.grades() if g["level"] == "conversation"}
    assert len(graded) == len(ids)  # as many conversations as ids
    assert max(map(len, graded)) == 200 and all("~" in cid for cid in graded)
    assert max(len(line) for line in server.log().splitlines()) < 2_000
    assert len(page) < 100_000  # 41 conversations, not 1.4 MB of ids
