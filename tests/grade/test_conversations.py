"""Conversations: which conversation a run belongs to, the merged trajectory conversation suites grade, when a
held conversation completes (settle, end marker, caps) and re-opens, and the offline path across input files."""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.cli import main
from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.settings import ConversationSettings
from otelgrade.core.trajectory import Conversation, Trajectory
from otelgrade.export.sinks.otlp import evaluation_event
from otelgrade.grade.conversations import (
    CONVERSATION_OVERHEAD,
    SETTLE_BATCH,
    TURN_OVERHEAD,
    Conversations,
    Journal,
    merge,
)
from otelgrade.grade.graders import grader_specs
from otelgrade.grade.grading import Grading, Suite
from otelgrade.grade.judges.sampling import is_sampled, sample_key
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.conversation_turns import turn
from tests.fake_openai import FakeOpenAI, Reply
from tests.grade.graders.test_presets import judged_by
from tests.grade.judges.test_runner import api_key, fake, user_text

__all__ = ["api_key", "fake"]  # fixtures, used by name


class Recorder:
    """An SDK tracer whose finished spans are kept, to be encoded as the OTLP request an exporter would send."""

    def __init__(self, resource: dict[str, Any] | None = None) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource({"service.name": "support", **(resource or {})}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("support.agent")

    def take(self) -> bytes:
        """The spans finished since the last call, as one ExportTraceServiceRequest."""
        body = encode_spans(self.exporter.get_finished_spans()).SerializeToString()
        self.exporter.clear()
        return body

    def take_each_trace(self) -> list[bytes]:
        """The spans finished since the last call, one ExportTraceServiceRequest per trace, in the order they began."""
        by_trace: dict[int, list[Any]] = {}
        for span in self.exporter.get_finished_spans():
            by_trace.setdefault(span.context.trace_id, []).append(span)
        self.exporter.clear()
        return [encode_spans(spans).SerializeToString() for spans in by_trace.values()]

    def runs(self, id_attributes: tuple[str, ...] = ()) -> list[Trajectory]:
        return rebuild(decode_traces(self.take()).spans, id_attributes=id_attributes)


# --- identity ---------------------------------------------------------------------------------------------------


def test_a_model_call_spans_conversation_id_names_the_runs_conversation() -> None:
    rec = Recorder()
    turn(rec.tracer, [], "where is order 7?", "It shipped.", ["lookup_order"], ids={"gen_ai.conversation.id": "c-1"})
    [run] = rec.runs()
    assert run.conversation_id == "c-1" and not run.ends_conversation


def test_an_ancestor_span_or_the_resource_names_it_too() -> None:
    rec = Recorder()
    with rec.tracer.start_as_current_span("POST /chat", attributes={"session.id": "web-42"}):
        turn(rec.tracer, [], "hello", "Hi!")
    assert [r.conversation_id for r in rec.runs()] == ["web-42"]
    rec = Recorder(resource={"session.id": "proc-session"})
    turn(rec.tracer, [], "hello", "Hi!")
    assert [r.conversation_id for r in rec.runs()] == ["proc-session"]


def test_the_applications_own_attribute_is_read_only_when_the_config_names_it() -> None:
    rec = Recorder()
    turn(rec.tracer, [], "hello", "Hi!", on_agent={"app.chat_id": "chat-9"})
    body = rec.take()
    assert [r.conversation_id for r in rebuild(decode_traces(body).spans)] == [None]
    runs = rebuild(decode_traces(body).spans, id_attributes=("app.chat_id",))
    assert [r.conversation_id for r in runs] == ["chat-9"]


def test_the_end_marker_on_any_span_of_the_run_ends_its_conversation() -> None:
    rec = Recorder()
    ids = {"gen_ai.conversation.id": "c-2", "otelgrade.conversation.end": True}
    turn(rec.tracer, [], "thanks, bye", "Goodbye!", ids=ids)
    [run] = rec.runs()
    assert run.conversation_id == "c-2" and run.ends_conversation


# --- the merged trajectory ----------------------------------------------------------------------------------------


def three_turns(rec: Recorder, cid: str = "c-1", third_tools: tuple[str, ...] = ("delete_account",)) -> None:
    """A support conversation: a lookup, a question answered from memory, then the third turn's `third_tools`."""
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": cid}
    turn(rec.tracer, history, "Where is order 7? Do not touch my account.", "It shipped.", ["lookup_order"], ids)
    turn(rec.tracer, history, "When will it arrive?", "Tomorrow.", [], ids)
    turn(rec.tracer, history, "Close my old account please", "Done.", list(third_tools), ids)


def test_a_conversation_is_its_turns_merged_in_order_with_the_history_once() -> None:
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    conversation = merge(list(reversed(runs)))  # in any order
    assert isinstance(conversation, Conversation)
    assert conversation.turns == 3 and [r.trace_id for r in conversation.runs] == [r.trace_id for r in runs]
    assert conversation.conversation_id == "c-1"
    assert (conversation.trace_id, conversation.span_id) == (runs[-1].trace_id, runs[-1].span_id)
    assert conversation.input == "Where is order 7? Do not touch my account." and conversation.output == "Done."
    assert [c.name for c in conversation.tool_calls] == ["lookup_order", "delete_account"]
    assert [c.step for c in conversation.llm_calls] == [1, 2, 3, 4, 5]  # numbered across the turns
    users = [m["content"] for m in conversation.messages if m["role"] == "user"]
    assert users == [
        "Where is order 7? Do not touch my account.",
        "When will it arrive?",
        "Close my old account please",
    ]
    assert [m["content"] for m in conversation.messages if m["role"] == "assistant" and m["content"]] == [
        "It shipped.",
        "Tomorrow.",
        "Done.",
    ]


def test_a_part_one_turn_lacks_the_whole_conversation_lacks() -> None:
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    runs[1].lacks = ["messages"]
    assert merge(runs).lacks == ["messages"]


# --- grading conversations ------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def grading_for(graders: list[dict[str, Any]], clock: Clock, **settings: Any) -> tuple[Grading, list[Grade]]:
    exported: list[Grade] = []
    specs = [s for block in graders for s in grader_specs(block)]
    suite = Suite.build("whole", {}, specs, level="conversation")
    grading = Grading([suite], exported.extend, Metrics(), clock=clock, conversations=ConversationSettings(**settings))
    return grading, exported


SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}
SHORT = {"name": "short", "type": "max_turns", "max": 2}


def test_a_conversation_is_graded_settle_after_its_last_run_and_not_before() -> None:
    clock = Clock()
    grading, exported = grading_for([SAFE, SHORT], clock, settle=60)
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    for run in runs:
        grading.hold_turn(run)
        clock.now += 30  # each turn within settle of the one before
    assert exported == [] and grading.settle_conversations() == []
    clock.now += 30
    graded = grading.settle_conversations()
    assert {(g.grader, g.outcome, g.level, g.conversation_id) for g in graded} == {
        ("safe", "fail", "conversation", "c-1"),
        ("short", "fail", "conversation", "c-1"),
    }
    assert all((g.trace_id, g.span_id) == (runs[-1].trace_id, runs[-1].span_id) for g in graded)
    assert "delete_account" in next(g.rationale for g in graded if g.grader == "safe")
    assert grading.metrics.conversations_completed.labels("settled")._value.get() == 1


def test_a_burst_of_settled_conversations_is_graded_over_several_ticks_with_runs_graded_in_between() -> None:
    """Many conversations settling at once do not hold back run grading: each settling call (one per tick of the
    server, on the grading thread) grades a bounded batch and leaves the rest due for the next; runs that arrive
    meanwhile are graded between the batches. Every conversation is graded, once."""
    clock = Clock()
    exported: list[Grade] = []
    run_suite = Suite.build("runs", {}, grader_specs(SAFE))
    conversation_suite = Suite.build("whole", {}, grader_specs(SHORT), level="conversation")
    grading = Grading(
        [run_suite, conversation_suite],
        exported.extend,
        Metrics(),
        clock=clock,
        conversations=ConversationSettings(settle=60),
    )
    rec = Recorder()
    burst = 3 * SETTLE_BATCH + 5
    for n in range(burst):
        turn(rec.tracer, [], f"question {n}", "An answer.", ids={"gen_ai.conversation.id": f"c{n}"})
    for run in rec.runs():
        grading.hold_turn(run)
    clock.now += 61  # all of them settle together
    ticks: list[tuple[int, int]] = []  # per tick: runs graded, conversations graded
    while (deadline := grading.next_conversation_deadline()) is not None and deadline <= clock.now:
        turn(rec.tracer, [], f"a run during tick {len(ticks)}", "Hi.")  # a run that names no conversation
        runs_graded = sum(len(grading.grade(run)[0]) for run in rec.runs())
        ticks.append((runs_graded, len({g.conversation_id for g in grading.settle_conversations()})))
        assert len(ticks) <= burst, "the settling never ends"
    assert [conversations for _, conversations in ticks] == [SETTLE_BATCH] * 3 + [5]
    assert all(runs == 1 for runs, _ in ticks)
    graded = [g.conversation_id for g in exported if g.level == "conversation"]
    assert sorted(graded) == sorted(f"c{n}" for n in range(burst))  # none lost, none twice
    assert [g.level for g in exported].count("run") == len(ticks)
    assert grading.metrics.conversations_completed.labels("settled")._value.get() == burst
    assert not grading.conversations.open


def test_the_end_marker_grades_the_conversation_at_once() -> None:
    clock = Clock()
    grading, _exported = grading_for([SHORT], clock, settle=3600)
    rec = Recorder()
    ids = {"gen_ai.conversation.id": "c-3"}
    history: list[dict[str, Any]] = []
    turn(rec.tracer, history, "hi", "Hello!", ids=ids)
    turn(rec.tracer, history, "bye", "Bye!", ids={**ids, "otelgrade.conversation.end": "true"})
    graded = [g for run in rec.runs() for g in grading.hold_turn(run)]
    assert [(g.grader, g.outcome, g.revision) for g in graded] == [("short", "pass", 1)]


def test_a_run_after_completion_reopens_the_conversation_and_it_is_graded_again_with_every_turn() -> None:
    clock = Clock()
    grading, _exported = grading_for([SAFE, SHORT], clock, settle=60)
    rec = Recorder()
    three_turns(rec, third_tools=())
    runs = rec.runs()
    for run in runs[:2]:
        grading.hold_turn(run)
    clock.now += 61
    first = grading.settle_conversations()
    assert {(g.grader, g.outcome, g.revision) for g in first} == {("safe", "pass", 1), ("short", "pass", 1)}
    grading.hold_turn(runs[2])  # the user comes back
    clock.now += 61
    again = grading.settle_conversations()
    assert {(g.grader, g.outcome, g.revision) for g in again} == {("safe", "pass", 2), ("short", "fail", 2)}
    assert grading.metrics.conversations_reopened._value.get() == 1
    assert grading.metrics.regrades.labels("whole", "short", "pass_to_fail")._value.get() == 1


def test_past_the_caps_the_oldest_open_conversation_is_graded_as_it_stands_and_counted() -> None:
    clock = Clock()
    grading, _ = grading_for([SHORT], clock, settle=3600, max_conversations=2)
    rec = Recorder()
    for cid in ("a", "b", "c"):
        turn(rec.tracer, [], f"hello from {cid}", "Hi!", ids={"gen_ai.conversation.id": cid})
    graded = [g for run in rec.runs() for g in grading.hold_turn(run)]
    assert [(g.conversation_id, g.outcome) for g in graded] == [("a", "pass")]
    assert grading.metrics.conversations_completed.labels("evicted")._value.get() == 1
    assert sorted(held.conversation().conversation_id for held in grading.conversations.open.values()) == ["b", "c"]


def test_held_conversations_stay_within_their_byte_cap() -> None:
    clock = Clock()
    rec = Recorder()
    for cid in range(20):
        turn(rec.tracer, [], os.urandom(1000).hex(), "Hi!", ids={"gen_ai.conversation.id": f"c{cid}"})
    runs = rec.runs()
    one = len(zlib.compress(runs[0].model_dump_json().encode(), 1)) + TURN_OVERHEAD + CONVERSATION_OVERHEAD
    cap = 8 * one  # room for about 8 of them, compressed
    grading, _ = grading_for([SHORT], clock, settle=3600, max_bytes=cap)
    evicted = [g for run in runs for g in grading.hold_turn(run)]
    assert grading.conversations.nbytes <= cap and len(evicted) == 20 - len(grading.conversations.open)
    assert 0 < len(evicted) < 20


def test_the_default_byte_cap_holds_the_default_number_of_three_turn_conversations() -> None:
    """With turns as the captured frameworks send them (each repeats the history), `max_bytes` holds
    `max_conversations` conversations of three turns, so the count cap, not the byte cap, is the one reached."""
    from bench.conversations import captured_turns

    turns = [run.model_dump_json().encode() for run in captured_turns()]
    held = sum(len(zlib.compress(body, 1)) + TURN_OVERHEAD for body in turns) / len(turns)
    defaults = ConversationSettings()
    assert defaults.max_conversations * (3 * held + CONVERSATION_OVERHEAD) <= defaults.max_bytes


def test_held_turns_are_compressed_and_come_back_whole(tmp_path: Path) -> None:
    """A turn repeats its conversation's history: held compressed it costs a fraction of its JSON, and the
    conversation graded (and the journal written) from it is the same."""
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    holder = Conversations(ConversationSettings(settle=60), Clock())
    holder.journal = Journal(tmp_path)
    for run in runs:
        holder.add(run)
    key = runs[0].conversation_key
    assert key is not None
    held = holder.open[key]
    json_bytes = sum(len(run.model_dump_json()) for run in runs)
    assert sum(len(body) for body in held.turns.values()) < json_bytes / 2
    assert held.conversation() == merge(runs, "c-1")
    holder.journal.close()
    again = Conversations(ConversationSettings(settle=60), Clock())
    assert again.restore(Journal(tmp_path)) == 1
    assert again.open[key].conversation() == merge(runs, "c-1")
    # a journal written before turns were held compressed: its lines are read as they were written
    lines = [{"c": key, "t": r.trace_id, "s": r.span_id, "r": json.loads(r.model_dump_json())} for r in runs]
    (tmp_path / "before").mkdir()
    (tmp_path / "before" / Journal.NAME).write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = Conversations(ConversationSettings(settle=60), Clock())
    assert before.restore(Journal(tmp_path / "before")) == 1
    assert before.open[key].conversation() == merge(runs, "c-1")


def test_what_holding_costs_is_counted_and_the_deadlines_stay_as_many_as_the_open_conversations() -> None:
    """A long conversation keeps one settle deadline, not one per turn; conversations the caps grade early leave
    theirs behind only for a while; the bytes counted against `max_bytes` include what holding a turn and a
    conversation costs beyond the turn's JSON (measured in bench/conversations.py)."""
    clock = Clock()
    holder = Conversations(ConversationSettings(settle=60, max_conversations=10, max_conversation_turns=5000), clock)
    template = Trajectory(trace_id="t", span_id="s", input="hello")
    for n in range(3000):
        holder.add(template.model_copy(update={"trace_id": f"t{n}", "conversation_id": "long"}))
    assert len(holder._deadlines) == 1  # the heap is what grew with every turn
    json_bytes = sum(len(body) for body in holder.open["long"].turns.values())
    assert holder.nbytes == json_bytes + 3000 * TURN_OVERHEAD + CONVERSATION_OVERHEAD
    for n in range(5000):  # short conversations, most graded early to stay within max_conversations
        holder.add(template.model_copy(update={"trace_id": f"u{n}", "conversation_id": f"c{n}"}))
    assert len(holder.open) == 10 and len(holder._deadlines) <= 2 * 10 + 1024
    clock.now += 61
    assert len(holder.due()) == 10 and not holder.open


def test_a_run_that_names_no_conversation_is_counted_not_graded() -> None:
    clock = Clock()
    grading, exported = grading_for([SHORT], clock, settle=1)
    rec = Recorder()
    turn(rec.tracer, [], "hello", "Hi!")
    for run in rec.runs():
        grading.hold_turn(run)
    clock.now += 5
    assert grading.settle_conversations() == [] and exported == []
    assert grading.metrics.runs_without_conversation._value.get() == 1


def test_run_suites_do_not_see_conversations_nor_conversation_suites_runs() -> None:
    clock = Clock()
    exported: list[Grade] = []
    run_suite = Suite.build("turns", {}, grader_specs(SAFE))
    whole = Suite.build("whole", {}, grader_specs(SHORT), level="conversation")
    grading = Grading([run_suite, whole], exported.extend, Metrics(), clock=clock)
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    for run in runs:
        grading.grade(run)
    assert [(g.suite, g.outcome, g.level) for g in exported] == [("turns", o, "run") for o in ("pass", "pass", "fail")]
    exported.clear()
    grading.grade(merge(runs))
    assert [(g.suite, g.level) for g in exported] == [("whole", "conversation")]


def test_judges_sample_a_conversation_by_its_id_whichever_run_is_last() -> None:
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    two, three = merge(runs[:2]), merge(runs)
    assert two.trace_id != three.trace_id and sample_key(two) == sample_key(three)
    rates = [0.1 * n for n in range(1, 10)]
    assert [is_sampled(sample_key(two), "j", r) for r in rates] == [
        is_sampled(sample_key(three), "j", r) for r in rates
    ]


# --- configuration --------------------------------------------------------------------------------------------------


def test_conversation_graders_need_a_conversation_suite() -> None:
    with pytest.raises(ConfigError, match=r"suites\[0\]\.level.*max_turns.*level: conversation"):
        parse_config({"suites": [{"name": "s", "graders": [SHORT]}]})
    with pytest.raises(ConfigError, match=r"suites\[0\]\.level.*`run`.*`conversation`"):
        parse_config({"suites": [{"name": "s", "level": "session", "graders": [SAFE]}]})
    config = parse_config(
        {
            "conversations": {"settle": "5m", "id_attributes": ["app.chat_id"]},
            "suites": [{"name": "s", "level": "conversation", "graders": [SHORT]}],
        }
    )
    assert config.suites[0].level == "conversation" and config.conversations.settle == 300
    assert config.conversations.id_attributes == ["app.chat_id"]


# --- offline ----------------------------------------------------------------------------------------------------------


def test_grade_groups_runs_across_files_and_grades_each_conversation_at_the_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = Recorder()
    three_turns(rec, "c-1")
    history: list[dict[str, Any]] = []
    turn(rec.tracer, history, "hi", "Hello!", on_agent={"app.chat_id": "other"})
    # Each turn in a file of its own, in two folders, as an exporter's files would be.
    for number, body in enumerate(rec.take_each_trace()):
        folder = tmp_path / ("a" if number % 2 else "b")
        folder.mkdir(exist_ok=True)
        (folder / f"turn{number}.pb").write_bytes(body)
    config = tmp_path / "otelgrade.yaml"
    config.write_text(
        json.dumps(
            {
                "conversations": {"id_attributes": ["app.chat_id"]},
                "suites": [
                    {"name": "whole", "level": "conversation", "graders": [SAFE, SHORT]},
                    {"name": "turns", "graders": [{"name": "budget", "type": "max_tool_calls", "max": 5}]},
                ],
            }
        )
    )
    code = main(["grade", "--config", str(config), "--format", "json", str(tmp_path / "a"), str(tmp_path / "b")])
    grades = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1
    whole = {(g["conversation_id"], g["grader"]): g["outcome"] for g in grades if g["level"] == "conversation"}
    assert whole == {
        ("c-1", "safe"): "fail",
        ("c-1", "short"): "fail",
        ("other", "safe"): "pass",
        ("other", "short"): "pass",
    }
    turns = [g for g in grades if g["level"] == "run"]
    assert len(turns) == 4 and {g["conversation_id"] for g in turns} == {"c-1", "other"}


def test_a_conversation_grade_names_its_level_and_conversation_in_every_record() -> None:
    clock = Clock()
    grading, _ = grading_for([SAFE], clock, settle=1)
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    for run in runs:
        grading.hold_turn(run)
    clock.now += 2
    [grade] = grading.settle_conversations()
    record = grade.to_dict()
    assert (record["level"], record["conversation_id"], record["trace_id"]) == (
        "conversation",
        "c-1",
        runs[-1].trace_id,
    )
    event = evaluation_event(grade)
    assert event["otelgrade.level"] == "conversation" and event["gen_ai.conversation.id"] == "c-1"


def test_the_journal_holds_the_turns_again_and_skips_a_record_cut_short(tmp_path: Path) -> None:
    clock = Clock()
    rec = Recorder()
    three_turns(rec)
    runs = rec.runs()
    held = Conversations(ConversationSettings(settle=60), clock)
    held.restore(Journal(tmp_path))
    for run in runs[:2]:
        held.add(run)
    assert held.journal is not None
    held.journal.close()
    with (tmp_path / Journal.NAME).open("ab") as file:
        file.write(b'{"c": "c-1", "t": "ab')  # the write a crash cut short
    again = Conversations(ConversationSettings(settle=60), clock)
    assert again.restore(Journal(tmp_path)) == 1
    again.add(runs[2])
    clock.now += 61
    [done] = again.due()
    assert [r.trace_id for r in done.conversation.runs] == [r.trace_id for r in runs]
    assert done.conversation.messages == merge(runs).messages


# --- the conversation graders --------------------------------------------------------------------------------------


def grade_with(block: dict[str, Any], trajectory: Trajectory) -> Any:
    [spec] = grader_specs(block)
    [(_, verdict)] = spec.scoped().verdicts(trajectory)
    return verdict


def test_user_repeats_finds_the_same_request_again_whatever_its_case_and_spacing() -> None:
    rec = Recorder()
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "r"}
    for user in ("When does order 7 ship?", "Can I change the address?", "when does  ORDER 7 ship?"):
        turn(rec.tracer, history, user, "Soon.", ids=ids)
    conversation = merge(rec.runs())
    repeated = grade_with({"type": "user_repeats"}, conversation)
    assert repeated.outcome == "fail" and "turn 3" in repeated.rationale
    assert grade_with({"type": "user_repeats", "max": 1}, conversation).outcome == "pass"
    assert (
        grade_with({"type": "user_repeats", "similarity": 1.0}, conversation).outcome == "fail"
    )  # the same, normalized


def test_escalation_sees_a_hand_off_tool_an_application_marker_or_a_phrase() -> None:
    rec = Recorder()
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "e"}
    turn(rec.tracer, history, "I want a refund", "Let me check.", ["lookup_order"], ids)
    turn(rec.tracer, history, "This is not working", "A colleague will take over.", ["transfer_to_human"], ids)
    handed = merge(rec.runs())
    verdict = grade_with({"type": "escalation"}, handed)
    assert verdict.outcome == "fail" and "turn 2 hands over to `human`" in verdict.rationale
    assert grade_with({"type": "escalation", "expect": True}, handed).outcome == "pass"
    kept = merge(handed.runs[:1])
    assert grade_with({"type": "escalation"}, kept).outcome == "pass"
    assert grade_with({"type": "escalation", "phrases": ["let me CHECK"]}, kept).outcome == "fail"
    marked = kept.runs[0].model_copy(update={"attributes": {"otelgrade.conversation.escalated": True}})
    assert grade_with({"type": "escalation"}, merge([marked])).outcome == "fail"


def test_a_conversation_grader_on_a_single_run_says_where_it_belongs() -> None:
    rec = Recorder()
    turn(rec.tracer, [], "hello", "Hi!", ids={"gen_ai.conversation.id": "x"})
    [run] = rec.runs()
    verdict = grade_with({"type": "max_turns", "max": 3}, run)
    assert verdict.outcome == "error" and "level: conversation" in verdict.rationale


@pytest.mark.parametrize("preset", ["conversation_resolved_judge", "conversation_consistent_judge"])
def test_a_conversation_judge_is_shown_every_turn_and_grades_from_the_models_score(
    fake: FakeOpenAI, api_key: None, preset: str
) -> None:
    rec = Recorder()
    three_turns(rec, third_tools=())
    conversation = merge(rec.runs())
    fake.default = lambda body: Reply.grade(0.25, "the account was never closed")
    [grade], _ = judged_by(fake, preset, [conversation], threshold=0.5)
    assert (grade.outcome, grade.score) == ("fail", 0.25)
    shown = user_text(fake.requests[0])
    assert all(text in shown for text in ("Where is order 7?", "When will it arrive?", "Close my old account please"))
    assert ("Tomorrow." in shown) and ("It shipped." in shown)


def test_an_agent_nested_in_a_turn_is_part_of_the_turns_conversation() -> None:
    rec = Recorder()
    tracer = rec.tracer
    support = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
    expert = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "expert"}
    with tracer.start_as_current_span("invoke_agent support", attributes=support):
        turn_id = {"gen_ai.conversation.id": "c-n"}
        with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat", **turn_id}):
            pass
        with (
            tracer.start_as_current_span("invoke_agent expert", attributes=expert),
            tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}),
        ):
            pass
    runs = rec.runs()
    nested = [r for r in runs if r.parent_span_id is not None]
    assert nested and {r.conversation_id for r in runs} == {"c-n"}


def test_grade_reports_each_conversation_with_its_turns_and_says_when_no_run_names_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = Recorder()
    three_turns(rec, "c-9")
    (tmp_path / "turns.pb").write_bytes(rec.take())
    config = tmp_path / "otelgrade.yaml"
    config.write_text(json.dumps({"suites": [{"name": "whole", "level": "conversation", "graders": [SAFE]}]}))
    assert main(["grade", "--config", str(config), str(tmp_path / "turns.pb")]) == 1
    report = capsys.readouterr().out
    assert "conversation c-9  3 turn(s)" in report and "FAIL  whole/safe" in report
    assert "3 run(s), 1 conversation(s), 1 grade(s): 1 failed" in report
    turn(rec.tracer, [], "hello", "Hi!")  # names no conversation
    (tmp_path / "anonymous.pb").write_bytes(rec.take())
    assert main(["grade", "--config", str(config), str(tmp_path / "anonymous.pb")]) == 2
    problem = capsys.readouterr().err
    assert "none of the 1 run(s) names a conversation" in problem and "conversations.id_attributes" in problem
