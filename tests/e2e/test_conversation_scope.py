"""A conversation is its application's: two services whose session ids collide hold two conversations, each graded
by its own suite, with the scope beside the id wherever the id shows (grades, webhook, pages); offline grading
keeps them apart too, and `conversations.scope_attribute` names another attribute, or none."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.conftest import ServeProcess
from tests.conversation_turns import turn
from tests.grade.test_conversations import Recorder


def app_suite(service: str) -> dict[str, Any]:
    return {
        "name": f"{service}-whole",
        "level": "conversation",
        "match": {"service.name": service},
        "graders": [{"name": "short", "type": "max_turns", "max": 2}],
    }


def two_turns(server: ServeProcess, service: str) -> list[int]:
    """Two turns of conversation `1` from `service`, sent by the SDK's OTLP/gRPC exporter."""
    provider = TracerProvider(resource=Resource({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.grpc_address, insecure=True)))
    tracer = provider.get_tracer(service)
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "1"}
    traces = [turn(tracer, history, f"Hello {service}", "Hi!", [], ids), turn(tracer, history, "Bye", "Bye!", [], ids)]
    provider.shutdown()
    return traces


def get(server: ServeProcess, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(server.metrics_url + path, timeout=5) as response:
            return response.status, str(response.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, str(error.read().decode())


@pytest.mark.parametrize("workers", [1, 2])
def test_two_applications_with_the_same_session_id_hold_two_conversations(serve, workers: int) -> None:  # type: ignore[no-untyped-def]
    config = {
        "server": {"workers": workers},
        "conversations": {"settle": "1s"},
        "suites": [app_suite("shop-a"), app_suite("shop-b")],
    }
    server = serve(config)
    two_turns(server, "shop-a")
    two_turns(server, "shop-b")
    server.wait_for_metric("otelgrade_conversations_graded_total", None, 2)
    listed = get(server, "/conversations")[1]
    either = get(server, "/conversations/1")[1]  # the id alone: both applications' conversations are offered
    status_a, page_a = get(server, "/conversations/1?scope=shop-a")
    api = json.loads(get(server, "/api/grades?level=conversation")[1])
    assert server.stop() == 0
    graded = sorted(
        (g["suite"], g["conversation_scope"], g["conversation_id"], g["outcome"])
        for g in server.grades()
        if g["level"] == "conversation"
    )
    # Before, one 4-turn conversation: the last turn's application's suite failed it, the other graded nothing.
    assert graded == [("shop-a-whole", "shop-a", "1", "pass"), ("shop-b-whole", "shop-b", "1", "pass")]
    assert listed.count("<code>1</code>") == 2 and "shop-a" in listed and "shop-b" in listed
    assert "/conversations/1?scope=shop-a" in either and "/conversations/1?scope=shop-b" in either
    assert status_a == 200 and page_a.count("open run") == 2 and "Hello shop-a" in page_a
    assert "Hello shop-b" not in page_a
    assert sorted(g["conversation_url"] for g in api["grades"]) == [
        "/conversations/1?scope=shop-a",
        "/conversations/1?scope=shop-b",
    ]


def runs_of_two_apps(scope_attribute: str | None) -> list[tuple[str | None, str | None, str | None]]:
    """(conversation id, scope, key) of one turn from each of two services sharing `tenant` and conversation `1`."""
    found = []
    for service in ("shop-a", "shop-b"):
        rec = Recorder(resource={"service.name": service, "tenant": "acme"})
        turn(rec.tracer, [], "hello", "Hi!", ids={"gen_ai.conversation.id": "1"})
        [run] = rebuild(decode_traces(rec.take()).spans, scope_attribute=scope_attribute)
        found.append((run.conversation_id, run.conversation_scope, run.conversation_key))
    return found


def test_the_scope_attribute_decides_whose_id_it_is() -> None:
    by_service = runs_of_two_apps("service.name")
    assert [(cid, scope) for cid, scope, _ in by_service] == [("1", "shop-a"), ("1", "shop-b")]
    assert by_service[0][2] != by_service[1][2]
    by_tenant = runs_of_two_apps("tenant")  # two services of one tenant share its conversations
    assert [scope for _, scope, _ in by_tenant] == ["acme", "acme"] and by_tenant[0][2] == by_tenant[1][2]
    unscoped = runs_of_two_apps(None)
    assert [(scope, key) for _, scope, key in unscoped] == [(None, "1"), (None, "1")]
