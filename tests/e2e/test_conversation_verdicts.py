"""Conversation verdicts over the real captures (`tests/fixtures/conversations/`) are the ground truth's.

The captures' own suite (`suite.yaml`: `tools_not_called`, `max_turns`, `user_repeats` at `level: conversation`)
grades each captured conversation, offline (`otelgrade grade` over the capture files) and live (a server fed by
the OpenTelemetry SDK's exporter, turn by turn). The ground truth gives the verdicts of every revision: the
`resumed` conversations complete after two turns and are graded again, as their second revision, when the
later turns come; only a server that re-opens a completed conversation gives the second revision's four-turn
verdicts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.rebuild import rebuild
from tests.captures import load_folder
from tests.conftest import ServeProcess
from tests.paths import FIXTURES
from tests.replay import exporters, grade_offline, sdk_spans

CAPTURES = FIXTURES / "conversations"
SUITE = CAPTURES / "suite.yaml"
GRADED = "otelgrade_conversations_graded_total"


def captured() -> list[tuple[Path, dict[str, Any]]]:
    """(scenario folder, its conversation's ground truth) of every capture."""
    out = []
    for expected_file in sorted(CAPTURES.glob("*/expected.json")):
        for name, spec in sorted(json.loads(expected_file.read_text())["scenarios"].items()):
            (conversation,) = spec["conversations"]
            out.append((expected_file.parent / name, conversation))
    return out


def request_files(folder: Path, turns: Iterable[dict[str, Any]]) -> list[Path]:
    """The captured requests that carry these turns' spans, in arrival order."""
    wanted = {bytes.fromhex(t["trace_id"]) for t in turns}
    files = []
    for path in sorted(folder.glob("*.pb")):
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(path.read_bytes())
        ids = {s.trace_id for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans}
        assert ids <= wanted or not ids & wanted, f"{path} mixes turns"
        if ids & wanted:
            files.append(path)
    return files


def before_and_after_pause(folder: Path, conversation: dict[str, Any]) -> tuple[list[Path], list[Path]]:
    """The request files sent before the user's pause, and those after it (none when the user did not pause)."""
    turns = conversation["turns"]
    cut = (conversation["resumed_at_turn"] or len(turns) + 1) - 1
    return request_files(folder, turns[:cut]), request_files(folder, turns[cut:])


def revisions(grades: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
    """Per conversation id, its conversation grades' verdicts (grader -> outcome), one dict per revision."""
    out: dict[str, dict[int, dict[str, str]]] = {}
    for grade in grades:
        if grade.get("level") == "conversation":
            by_revision = out.setdefault(grade["conversation_id"], {})
            by_revision.setdefault(grade.get("revision", 1), {})[grade["grader"]] = grade["outcome"]
    return {cid: [verdicts for _, verdicts in sorted(revs.items())] for cid, revs in out.items()}


def test_offline_every_conversation_gets_its_final_verdicts(tmp_path: Path) -> None:
    """All the turns given at once: one grading of each conversation, with the verdicts of its last revision,
    attached to its last turn."""
    cases = captured()
    grades = grade_offline(SUITE, [folder for folder, _ in cases])
    got = revisions(grades)
    for folder, conversation in cases:
        want = conversation["revisions"][-1]["verdicts"]
        assert got.get(conversation["conversation_id"]) == [want], f"{folder.parent.name}/{folder.name}"
    assert len(got) == len(cases)
    last_turns = {c["conversation_id"]: c["turns"][-1]["trace_id"] for _, c in cases}
    assert all(g["trace_id"] == last_turns[g["conversation_id"]] for g in grades if g.get("level") == "conversation")


def test_offline_the_turns_before_the_pause_get_the_first_revisions_verdicts() -> None:
    resumed = [(folder, c) for folder, c in captured() if c["resumed_at_turn"]]
    assert len(resumed) >= 4
    for folder, conversation in resumed:
        before, _ = before_and_after_pause(folder, conversation)
        got = revisions(grade_offline(SUITE, before))
        assert got == {conversation["conversation_id"]: [conversation["revisions"][0]["verdicts"]]}, folder


def replay(server: ServeProcess, files: Iterable[Path]) -> None:
    """Send the captured requests with the OpenTelemetry SDK's OTLP/gRPC exporter, as the service did."""
    spans, _ = exporters("grpc", server.grpc_address, server.http_url)
    for path in files:
        result = spans.export(sdk_spans(path.read_bytes()))
        assert result.name == "SUCCESS", f"export of {path} failed: {result}"
    spans.shutdown()


def suite_config(**conversations: Any) -> dict[str, Any]:
    config = yaml.safe_load(SUITE.read_text())
    config["conversations"].update(conversations)
    return dict(config)


def test_live_verdicts_match_and_a_resumed_conversation_is_graded_again(serve) -> None:  # type: ignore[no-untyped-def]
    """The turns before the user's pause, then (once every conversation is complete) the turns after it. A longer
    `settle` than the suite's keeps a busy machine's pauses between replayed turns from completing a conversation
    early; the user's pause is replayed by waiting until the conversations are complete."""
    server = serve(suite_config(settle="3s"))
    cases = captured()
    later: list[Path] = []
    for folder, conversation in cases:
        before, after = before_and_after_pause(folder, conversation)
        replay(server, before)
        later += after
    server.wait_for_metric(GRADED, {"suite": "conversation"}, len(cases), timeout=60)
    resumed = sum(1 for _, c in cases if c["resumed_at_turn"])
    replay(server, later)  # the user comes back, after the conversation was complete
    server.wait_for_metric(GRADED, {"suite": "conversation"}, len(cases) + resumed, timeout=60)
    reopened = server.metric("otelgrade_conversations_reopened_total")
    server.stop()  # the sink's file is complete
    got = revisions(server.grades())
    for folder, conversation in cases:
        want = [r["verdicts"] for r in conversation["revisions"]]
        assert got.get(conversation["conversation_id"]) == want, f"{folder.parent.name}/{folder.name}"
    assert reopened == resumed


def test_live_an_end_marker_completes_the_conversation_without_waiting(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(suite_config(settle="10m"))
    ended = [(folder, c) for folder, c in captured() if c["ended_by_marker"]]
    assert ended
    for folder, _ in ended:
        replay(server, sorted(folder.glob("*.pb")))
    server.wait_for_metric("otelgrade_conversations_completed_total", {"reason": "ended"}, len(ended), timeout=30)
    assert server.metric(GRADED, {"suite": "conversation"}) == len(ended)
    server.stop()
    got = revisions(server.grades())
    assert got == {c["conversation_id"]: [c["revisions"][-1]["verdicts"]] for _, c in ended}


def with_group_id(folder: Path, out: Path, value: str) -> Path:
    """A copy of a Logfire capture's request files whose `group_id` attributes all say `value` (what Logfire
    writes when the application set no group)."""
    out.mkdir()
    for path in sorted(folder.glob("*.pb")):
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(path.read_bytes())
        for span in (s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans):
            for attribute in span.attributes:
                if attribute.key == "group_id":
                    attribute.value.string_value = value
        (out / path.name).write_bytes(request.SerializeToString())
    return out


@pytest.mark.parametrize("unset", ["null", "None", ""])
def test_a_group_id_that_says_null_names_no_conversation(tmp_path: Path, unset: str) -> None:
    """The captures' suite asks for `group_id`; Logfire writes `'null'` there when no group is set. Such runs
    belong to no conversation: each is still a run, and no conversation named "null" gathers them all."""
    folder = CAPTURES / "logfire-openai-agents" / "later_forbidden"
    copy = with_group_id(folder, tmp_path / "capture", unset)
    id_attributes = yaml.safe_load(SUITE.read_text())["conversations"]["id_attributes"]
    assert "group_id" in id_attributes
    spans, logs = load_folder(copy)
    runs = [
        r
        for tid in {s.trace_id for s in spans}
        for r in rebuild([s for s in spans if s.trace_id == tid], logs, id_attributes=id_attributes)
    ]
    assert len([r for r in runs if r.parent_span_id is None]) == 3
    assert {r.conversation_id for r in runs} == {None}
    if unset == "null":  # as a CI job grades it: three runs, no conversation among them, and it says so
        command = [sys.executable, "-m", "otelgrade", "grade", "--config", str(SUITE), "--format", "json"]
        result = subprocess.run([*command, str(copy)], capture_output=True, text=True, timeout=180)
        assert "none of the 3 run(s) names a conversation" in result.stderr
        assert result.stdout == ""
        assert revisions(grade_offline(SUITE, [folder])) != {}  # the same turns with their group form one
