"""Conversations through `otelgrade serve`, each turn sent by the OpenTelemetry SDK's OTLP exporter as its own
trace: graded `settle` after the last turn, at once at the end marker, re-opened and graded again when the user
comes back, graded at shutdown rather than lost."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import ServeProcess
from tests.conversation_turns import turn

SUITE = {
    "name": "whole",
    "level": "conversation",
    "graders": [
        {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
        {"name": "short", "type": "max_turns", "max": 2},
    ],
}
GRADED = {"suite": "whole", "environment": "unknown"}
TURNS = {"name": "turns", "graders": [{"name": "cancels", "type": "tools_not_called", "tools": ["cancel_order"]}]}


def sdk(server: ServeProcess, service: str = "support-agent") -> tuple[TracerProvider, Any]:
    provider = TracerProvider(resource=Resource({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.grpc_address, insecure=True)))
    return provider, provider.get_tracer("support.agent")


def get(server: ServeProcess, path: str) -> str:
    with urllib.request.urlopen(server.metrics_url + path, timeout=5) as response:
        return str(response.read().decode())


def conversation_grades(server: ServeProcess) -> list[tuple[str, str, int, str]]:
    return sorted(
        (g["grader"], g["outcome"], g["revision"], g["trace_id"])
        for g in server.grades()
        if g["level"] == "conversation"
    )


def test_a_conversation_that_resumes_after_it_completed_is_graded_again_with_all_its_turns(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"conversations": {"settle": "1s"}, "suites": [SUITE, TURNS]})
    provider, tracer = sdk(server)
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "conv-7"}
    turn(tracer, history, "Where is order 7?", "It shipped.", ["lookup_order"], ids)
    second = turn(tracer, history, "When does it arrive?", "Tomorrow.", [], ids)
    server.wait_for_metric("otelgrade_conversations_graded_total", GRADED, 1)
    third = turn(tracer, history, "Actually, cancel it.", "Cancelled.", ["cancel_order"], ids)  # the user is back
    server.wait_for_metric(
        "otelgrade_regrades_total", {"suite": "whole", "grader": "short", "change": "pass_to_fail"}, 1
    )
    reopened = server.metric("otelgrade_conversations_reopened_total")
    counted = server.metric("otelgrade_conversation_grades_total", {"suite": "whole", "grader": "short"})
    listed = get(server, "/conversations")
    page = get(server, "/conversations/conv-7")
    api = json.loads(get(server, "/api/grades?level=conversation"))
    provider.shutdown()
    server.stop()
    # The second revision holds the first two turns too: `short` (at most 2 turns) now fails, on the last turn's span.
    assert conversation_grades(server) == sorted(
        [
            ("safe", "pass", 1, f"{second:032x}"),
            ("short", "pass", 1, f"{second:032x}"),
            ("safe", "pass", 2, f"{third:032x}"),
            ("short", "fail", 2, f"{third:032x}"),
        ]
    )
    assert reopened == 1 and counted == 1  # pass rates count the conversation once; the re-grade is counted apart
    assert {g["conversation_id"] for g in server.grades()} == {"conv-7"}
    # The grades page lists the conversation, and shows it as its three turns, each with its own grades.
    assert "conv-7" in listed and "short: fail" in listed
    assert page.count("open run") == 3 and "Actually, cancel it." in page and "revision 2" in page
    assert "Forbidden tools were called" in page  # the third turn's own grade (`turns` / `cancels` failed)
    assert {(g["grader"], g["outcome"], g["level"]) for g in api["grades"]} == {
        ("safe", "pass", "conversation"),
        ("short", "fail", "conversation"),
    }
    assert all(g["conversation_url"] == "/conversations/conv-7?scope=support-agent" for g in api["grades"])


def test_the_end_marker_grades_at_once_and_shutdown_grades_what_is_still_open(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"conversations": {"settle": "1h"}, "suites": [SUITE]})
    provider, tracer = sdk(server)
    ended: list[dict[str, Any]] = []
    turn(tracer, ended, "hi", "Hello!", ids={"session.id": "ends"})
    turn(tracer, ended, "bye", "Bye!", ids={"session.id": "ends", "otelgrade.conversation.end": True})
    server.wait_for_metric("otelgrade_conversations_completed_total", {"reason": "ended"}, 1)
    open_one = turn(tracer, [], "Delete my account", "Deleted.", ["delete_account"], {"session.id": "open"})
    server.wait_for_metric("otelgrade_conversations_open", None, 1)
    provider.shutdown()
    server.stop()
    grades = {(g["conversation_id"], g["grader"]): (g["outcome"], g["trace_id"]) for g in server.grades()}
    assert grades[("ends", "short")][0] == "pass"
    assert grades[("open", "safe")] == ("fail", f"{open_one:032x}")


def test_with_the_spool_a_restart_keeps_every_conversations_earlier_turns(serve, tmp_path) -> None:  # type: ignore[no-untyped-def]
    spool = str(tmp_path / "spool")
    config = {"durability": {"spool_dir": spool}, "conversations": {"settle": "1h"}, "suites": [SUITE, TURNS]}
    first = serve(config)
    provider, tracer = sdk(first)
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "conv-9"}
    turn(tracer, history, "Where is order 9?", "It shipped.", ["lookup_order"], ids)
    turn(tracer, history, "And order 10?", "Also shipped.", ["lookup_order"], ids)
    first.wait_for_metric("otelgrade_runs_graded_total", {"suite": "turns"}, 2)
    provider.shutdown()
    first.kill()  # a crash: nothing is graded at shutdown
    second = serve({**config, "conversations": {"settle": "1s"}})
    provider, tracer = sdk(second)
    last = turn(tracer, history, "Thanks, that is all.", "You're welcome.", [], ids)
    second.wait_for_metric("otelgrade_conversations_graded_total", GRADED, 1)
    provider.shutdown()
    second.stop()
    # Three turns: the two from before the crash are part of the conversation graded after it.
    assert conversation_grades(second) == [("safe", "pass", 1, f"{last:032x}"), ("short", "fail", 1, f"{last:032x}")]
    assert first.grades() == [] or all(g["level"] == "run" for g in first.grades())


def test_turns_rebuilt_on_different_replicas_meet_on_the_replica_that_owns_the_conversation(serve) -> None:  # type: ignore[no-untyped-def]
    """Both replicas send their turns to the conversation router; here the router's choice is made for it (no
    Collector on this machine): it is `owner`, as the router's hash of `conv-r` would pick one replica."""
    owner = serve({"conversations": {"settle": "1s"}, "suites": [SUITE, TURNS]}, ready=False)
    secret = owner.workdir / "turn-token"
    secret.write_text("shared by the replicas\n")
    router = {"route_turns": f"http://127.0.0.1:{owner.http_port}", "turn_token_file": str(secret)}
    owner.write_config({**owner.config, "conversations": {"settle": "1s", **router}})
    owner.wait_ready()
    other = serve({"conversations": {"settle": "1s", **router}, "suites": [SUITE, TURNS]})
    ids = {"gen_ai.conversation.id": "conv-r"}
    history: list[dict[str, Any]] = []
    sent = []
    for number, (replica, user) in enumerate([(other, "Where is order 3?"), (owner, "And 4?"), (other, "Thanks")]):
        provider, tracer = sdk(replica)  # trace-id routing put this turn on `replica`
        sent.append(turn(tracer, history, user, f"Answer {number}.", ["lookup_order"], ids))
        provider.shutdown()
        replica.wait_for_metric("otelgrade_runs_graded_total", {"suite": "turns"}, 1 + (number == 2))
    owner.wait_for_metric("otelgrade_conversations_graded_total", GRADED, 1)
    received = owner.metric("otelgrade_turn_records_total", {"result": "received"})
    sent_by_other = other.metric("otelgrade_turn_records_total", {"result": "sent"})
    other.stop()
    owner.stop()
    # All three turns are one conversation on the owner: `short` (at most 2 turns) fails; the other replica
    # graded its own runs and no conversation.
    assert conversation_grades(owner) == [
        ("safe", "pass", 1, f"{sent[2]:032x}"),
        ("short", "fail", 1, f"{sent[2]:032x}"),
    ]
    assert conversation_grades(other) == []
    assert (received, sent_by_other) == (3, 2)
