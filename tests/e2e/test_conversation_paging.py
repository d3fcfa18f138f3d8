"""A guardrail broken only after a conversation resumed pages: a real Prometheus scrapes `otelgrade serve` (one and
two grading workers) with the shipped rules loaded, while the OpenTelemetry SDK sends a support conversation that
passes when it settles and deletes the account when the user comes back; and the same with a real LangGraph
conversation captured with OpenInference, its last turn (the delete) replayed after the first two settled."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conversation_turns import turn
from tests.e2e.test_alerting_live import firing
from tests.e2e.test_conversation_verdicts import captured, replay, request_files
from tests.e2e.test_conversations_live import sdk
from tests.promserver import PROMETHEUS, running_prometheus

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Prometheus is not installed; `make test` installs it")

SUPPORT = {
    "name": "support",
    "level": "conversation",
    "graders": [{"name": "no_delete", "type": "tools_not_called", "tools": ["delete_account"]}],
}
FIRST = {"suite": "support", "grader": "no_delete"}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_guardrail_failing_only_after_the_conversation_resumed_pages(serve, workers: int) -> None:  # type: ignore[no-untyped-def]
    server = serve({"server": {"workers": workers}, "conversations": {"settle": "1s"}, "suites": [SUPPORT]})
    provider, tracer = sdk(server)
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "order-1007"}
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"]) as prometheus:
        turn(tracer, history, "Where is my order 1007?", "It shipped yesterday.", ["lookup_order"], ids)
        turn(tracer, history, "Thanks.", "You're welcome.", [], ids)
        server.wait_for_metric("otelgrade_conversation_grades_total", {**FIRST, "outcome": "pass"}, 1)
        prometheus.wait_for('otelgrade_conversation_grades_total{grader="no_delete",outcome="pass"} == 1')
        # The user is back; the agent now does what it must never do.
        third = turn(tracer, history, "Close my account.", "Your account is deleted.", ["delete_account"], ids)
        server.wait_for_metric("otelgrade_regrades_total", {**FIRST, "change": "pass_to_fail"}, 1)
        prometheus.wait_for(
            "ALERTS", timeout=60, check=lambda _: bool(firing(prometheus, "OtelgradeConversationGuardrailFailed"))
        )
        alert = firing(prometheus, "OtelgradeConversationGuardrailFailed")[0]
        failed_first = server.metric("otelgrade_conversation_grades_total", {**FIRST, "outcome": "fail"})
        exemplars = prometheus.api(
            "query_exemplars", query="otelgrade_regrade_failures_total", start="0", end="9999999999"
        )
    provider.shutdown()
    assert server.stop() == 0
    assert (alert["labels"]["suite"], alert["labels"]["grader"]) == ("support", "no_delete")
    assert failed_first == 0  # the pass rate still counts the conversation once, as first graded
    assert [e["labels"]["trace_id"] for series in exemplars for e in series["exemplars"]] == [f"{third:032x}"]
    revisions = [(g["revision"], g["outcome"]) for g in server.grades() if g["level"] == "conversation"]
    assert revisions == [(1, "pass"), (2, "fail")]


def test_a_captured_conversation_whose_delete_comes_after_it_resumed_pages(serve) -> None:  # type: ignore[no-untyped-def]
    (folder, conversation), *_ = [
        (f, c) for f, c in captured() if f.parent.name == "langgraph-openinference" and f.name == "later_forbidden"
    ]
    assert [t["tool_calls"] for t in conversation["turns"]] == [["get_weather"], ["lookup"], ["delete_account"]]
    server = serve({"conversations": {"settle": "2s"}, "suites": [SUPPORT]})
    cid = conversation["conversation_id"]  # LangGraph's thread id, read from OpenInference's `session.id`
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"]) as prometheus:
        replay(server, request_files(folder, conversation["turns"][:2]))
        server.wait_for_metric("otelgrade_conversation_grades_total", {**FIRST, "outcome": "pass"}, 1)
        prometheus.wait_for('otelgrade_conversation_grades_total{grader="no_delete",outcome="pass"} == 1')
        assert not firing(prometheus, "OtelgradeConversationGuardrailFailed")
        replay(server, request_files(folder, conversation["turns"][2:]))  # the user came back after it settled
        prometheus.wait_for(
            "ALERTS", timeout=60, check=lambda _: bool(firing(prometheus, "OtelgradeConversationGuardrailFailed"))
        )
        alert = firing(prometheus, "OtelgradeConversationGuardrailFailed")[0]
    assert server.stop() == 0
    assert (alert["labels"]["suite"], alert["labels"]["grader"]) == ("support", "no_delete")
    graded = [(g["revision"], g["outcome"]) for g in server.grades() if g["level"] == "conversation"]
    assert graded[-1] == (len(graded), "fail") and len(graded) >= 2  # the resumed revision fails, the first passed
    assert {g["conversation_id"] for g in server.grades() if g["level"] == "conversation"} == {cid}
