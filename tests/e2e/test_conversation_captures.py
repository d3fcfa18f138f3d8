"""The conversation captures (`tests/fixtures/conversations/`) are what their ground truth says, turn by turn.

Each turn is its own trace and rebuilds as one run of its conversation, as the capture recorded it; its spans
carry the conversation id where the capture README says they do. The conversation verdicts over the same
captures are tested in `test_conversation_verdicts.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otelgrade.core.trajectory import Trajectory
from tests.captures import load_folder, rebuild_folder
from tests.e2e.test_rebuild_captures import differences
from tests.paths import FIXTURES

CAPTURES = FIXTURES / "conversations"


def conversations() -> list[Any]:
    """(scenario folder, the scenario's ground truth, its one conversation) of every capture."""
    out = []
    for expected_file in sorted(CAPTURES.glob("*/expected.json")):
        for name, spec in sorted(json.loads(expected_file.read_text())["scenarios"].items()):
            (conversation,) = spec["conversations"]
            folder = expected_file.parent / name
            out.append(pytest.param(folder, spec, conversation, id=f"{expected_file.parent.name}/{name}"))
    return out


def test_the_captures_cover_what_the_issue_asks_for() -> None:
    """At least three frameworks name the conversation themselves and one leaves it to the application; each
    has a conversation whose forbidden call comes in a later turn and one that resumes after a pause."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for param in conversations():
        folder, _, conversation = param.values
        by_source.setdefault(folder.parent.name, []).append(conversation)
    own_id = [s for s, cs in by_source.items() if all(c["id_attribute"] != "travel.conversation_id" for c in cs)]
    app_id = [s for s, cs in by_source.items() if all(c["id_attribute"] == "travel.conversation_id" for c in cs)]
    assert len(own_id) >= 3 and len(app_id) >= 1, by_source.keys()
    for source, found in by_source.items():
        later = [c for c in found if "delete_account" in c["turns"][-1]["tool_calls"] and len(c["turns"]) > 1]
        assert later and all("delete_account" not in t["tool_calls"] for t in later[0]["turns"][:-1]), source
        assert any(c["resumed_at_turn"] for c in found), source


@pytest.mark.parametrize(("folder", "spec", "conversation"), conversations())
def test_each_turn_is_its_own_trace_and_rebuilds_as_its_run(
    folder: Path, spec: dict[str, Any], conversation: dict[str, Any]
) -> None:
    runs = rebuild_folder(folder)
    turns = conversation["turns"]
    assert len({t["trace_id"] for t in turns}) == len(turns)
    for turn, expected in zip(turns, spec["runs"], strict=True):
        in_trace: list[Trajectory] = [r for r in runs if r.trace_id == turn["trace_id"]]
        assert len(in_trace) == 1, f"turn {turn['input']!r}: {len(in_trace)} runs in its trace"
        assert differences(expected, in_trace[0]) == []
        assert [c.name for c in in_trace[0].tool_calls] == turn["tool_calls"]
    assert conversation["final_answer"] == spec["runs"][-1]["output"]


@pytest.mark.parametrize(("folder", "spec", "conversation"), conversations())
def test_every_turn_carries_the_conversation_id(
    folder: Path, spec: dict[str, Any], conversation: dict[str, Any]
) -> None:
    """The attribute the ground truth names holds the conversation's id in every turn's trace, and no span of
    the capture names another conversation under that attribute."""
    spans, _ = load_folder(folder)
    key = conversation["id_attribute"]
    for turn in conversation["turns"]:
        values = {s.attributes[key] for s in spans if s.trace_id == turn["trace_id"] and key in s.attributes}
        assert values == {conversation["conversation_id"]}, turn["trace_id"]
