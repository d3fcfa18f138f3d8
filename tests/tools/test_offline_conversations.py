"""Offline, a conversation is graded from all its turns: `otelgrade grade --since` whose window cuts a conversation,
and `otelgrade agreement --human` whose labels name one of its turns, add its other turns and say so (before, the
conversation was rebuilt from the turns in the window or labelled only, and graded wrong without a word)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from otelgrade.core.trajectory import Trajectory
from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import SUITE  # safe: no delete_account; short: at most 2 turns
from tests.grade.test_conversations import Recorder
from tests.test_cli import run_main


def four_turns(tmp_path: Path) -> tuple[Path, list[Trajectory]]:
    """A conversation of four turns as trajectory JSON lines: the account deleted in the first, two hours ago; the
    last two turns within the last minutes."""
    rec = Recorder()
    history: list[dict[str, object]] = []
    ids = {"gen_ai.conversation.id": "c-4"}
    turn(rec.tracer, history, "Delete my account.", "Deleted.", ["delete_account"], ids)
    for text in ("And my data?", "Thanks.", "Bye."):
        turn(rec.tracer, history, text, "OK.", [], ids)
    now = datetime.now(UTC)
    runs = []
    for number, run in enumerate(rec.runs()):
        ended = now - (timedelta(hours=2 - number) if number < 2 else timedelta(minutes=4 - number))
        stamps = {"start_time": (ended - timedelta(seconds=1)).isoformat(), "end_time": ended.isoformat()}
        runs.append(run.model_copy(update=stamps))
    path = tmp_path / "turns.jsonl"
    path.write_text("".join(run.model_dump_json() + "\n" for run in runs))
    return path, runs


def config(tmp_path: Path) -> str:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(yaml.safe_dump({"suites": [SUITE]}))
    return str(path)


def test_a_window_cutting_a_conversation_grades_all_its_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns, _ = four_turns(tmp_path)
    code, out, err = run_main(
        capsys, "grade", "--config", config(tmp_path), "--format", "json", "--since", "3600", str(turns)
    )
    verdicts = {g["grader"]: g["outcome"] for g in map(json.loads, out.splitlines())}
    # Before: the window's 2 turns were the conversation: safe and short passed.
    assert verdicts == {"safe": "fail", "short": "fail"} and code == 1
    assert "2 run(s) outside the last 3600s added: the other turns of the conversations it touches" in err


def test_labels_naming_a_turn_grade_the_whole_conversation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turns, runs = four_turns(tmp_path)
    labels = tmp_path / "labels.csv"
    labels.write_text(f"trace_id,grader,verdict\n{runs[-1].trace_id},safe,fail\n")  # the last turn's trace
    code, out, err = run_main(
        capsys, "agreement", "--config", config(tmp_path), "--human", str(labels), "--format", "json", str(turns)
    )
    [result] = [r for r in map(json.loads, out.splitlines()) if r["grader"] == "safe"]
    assert code == 0 and (result["runs"], result["accuracy"]) == (1, 1.0)  # before: 0.0, the labelled turn alone
    assert "3 run(s) outside the runs" in err


def test_offline_numbers_a_resumed_conversation_as_the_live_service_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Turns a minute apart, then one 30 minutes later: with `settle: 10m` the live service graded the conversation
    after the second turn and again, as revision 2, after the third; offline says revision 2 too (before: 1)."""
    rec = Recorder()
    history: list[dict[str, object]] = []
    for text in ("Where is my order?", "Thanks.", "It never came."):
        turn(rec.tracer, history, text, "Checking.", [], {"gen_ai.conversation.id": "c-r"})
    start = datetime.now(UTC) - timedelta(hours=1)
    lines = []
    for run, minutes in zip(rec.runs(), (0, 1, 31), strict=True):
        begun = start + timedelta(minutes=minutes)
        stamps = {"start_time": begun.isoformat(), "end_time": (begun + timedelta(seconds=5)).isoformat()}
        lines.append(run.model_copy(update=stamps).model_dump_json() + "\n")
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(lines))
    config = tmp_path / "otelgrade.yaml"
    config.write_text(yaml.safe_dump({"conversations": {"settle": "10m"}, "suites": [SUITE]}))
    code, out, _ = run_main(capsys, "grade", "--config", str(config), "--format", "json", str(turns))
    assert code == 1  # three turns: `short` (at most 2) fails
    assert {(g["grader"], g["revision"]) for g in map(json.loads, out.splitlines())} == {("safe", 2), ("short", 2)}
