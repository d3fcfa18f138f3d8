"""`user_repeats` at its defaults fits support traffic: asking about order 1007, then about order 1008, is two
requests, not one asked again; asking about order 1007 twice is a repeat. Graded by `otelgrade serve` on
conversations sent by the OpenTelemetry SDK."""

from __future__ import annotations

from typing import Any

from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import sdk

REPEATS = {"name": "whole", "level": "conversation", "graders": [{"name": "repeats", "type": "user_repeats"}]}


def test_other_order_numbers_are_new_requests_and_the_same_one_is_a_repeat(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"suites": [REPEATS]})
    provider, tracer = sdk(server)
    asked = {
        "two-orders": ["Where is my order 1007?", "Where is my order 1008?"],
        "asked-again": ["Where is my order 1007?", "where is my order 1007"],
        "two-tickets": ["Status of ticket AB-12?", "Status of ticket AB-13?"],
    }
    for cid, questions in asked.items():
        history: list[dict[str, Any]] = []
        for number, question in enumerate(questions):
            ids: dict[str, Any] = {"gen_ai.conversation.id": cid}
            if number == len(questions) - 1:
                ids["otelgrade.conversation.end"] = True
            turn(tracer, history, question, "Let me check.", [], ids)
    provider.shutdown()
    server.wait_for_metric("otelgrade_conversations_graded_total", None, 3)
    assert server.stop() == 0
    verdicts = {g["conversation_id"]: g["outcome"] for g in server.grades() if g["level"] == "conversation"}
    assert verdicts == {"two-orders": "pass", "asked-again": "fail", "two-tickets": "pass"}
