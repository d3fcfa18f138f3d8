"""The conversation journal loses only what is damaged: `otelgrade serve` restarting on a spool whose journal holds a
line that is JSON but not a trajectory skips that turn, counts it (`otelgrade_spool_damage_total{kind="journal"}`)
and grades every other conversation settling with it; before, the batch of conversations settling together was
lost to a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from otelgrade.grade.conversations import Journal
from tests.conversation_turns import turn
from tests.grade.test_conversations import Recorder

SAFE = {
    "name": "whole",
    "level": "conversation",
    "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
}


def journal_line(key: str, trace_id: str, span_id: str, body: object) -> str:
    return json.dumps({"c": key, "t": trace_id, "s": span_id, "r": body}) + "\n"


def test_a_journal_line_that_is_not_a_trajectory_is_skipped_counted_and_the_rest_graded(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spool = tmp_path / "spool"
    spool.mkdir()
    lines = []
    for cid in ("first", "second", "z-damaged"):  # settling together, the damaged one last
        rec = Recorder()
        turn(rec.tracer, [], f"hello from {cid}", "Hi!", [], {"gen_ai.conversation.id": cid})
        [run] = rec.runs()
        assert run.conversation_key is not None
        body = json.loads(run.model_dump_json()) if cid != "z-damaged" else {"llm_calls": "not a list"}
        lines.append(journal_line(run.conversation_key, run.trace_id, run.span_id, body))
    (spool / Journal.NAME).write_text("".join(lines))
    server = serve({"durability": {"spool_dir": str(spool)}, "conversations": {"settle": "1s"}, "suites": [SAFE]})
    server.wait_for_metric("otelgrade_conversations_graded_total", None, 2)
    damage = server.wait_for_metric("otelgrade_spool_damage_total", {"kind": "journal"}, 1)
    assert server.stop() == 0
    graded = sorted(g["conversation_id"] for g in server.grades() if g["level"] == "conversation")
    assert graded == ["first", "second"] and damage == 1
    assert "a journalled turn" in server.log() and "is not a trajectory, skipped" in server.log()
