"""Turn records (OTLP log records of kind `otelgrade.conversation.turn`) are held only by a replica that routes
turns, only when the replicas' shared secret signs them, and never when they carry a ground truth: a record posted
to `otelgrade serve`'s OTLP/HTTP receiver by anyone else is refused, counted and logged, and grades nothing."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.turn_records import turn_request
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.conftest import ServeProcess
from tests.conversation_turns import turn
from tests.grade.test_conversations import Recorder

SUITE = {
    "name": "whole",
    "level": "conversation",
    "graders": [{"name": "right", "type": "potato.exact_match"}],  # the output against the run's ground truth
}
SECRET = b"replicas-share-this"


def a_turn(ground_truth: str | None = None) -> Trajectory:
    """One rebuilt turn of conversation `forged`; its answer is "It shipped."."""
    rec = Recorder(resource={"service.name": "support"})
    turn(rec.tracer, [], "Where is order 7?", "It shipped.", ["lookup_order"], {"gen_ai.conversation.id": "forged"})
    [run] = rebuild(decode_traces(rec.take()).spans)
    return run.model_copy(update={"ground_truth": ground_truth}) if ground_truth is not None else run


def post_logs(server: ServeProcess, body: bytes) -> int:
    request = urllib.request.Request(
        f"{server.http_url}/v1/logs", data=body, headers={"Content-Type": "application/x-protobuf"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


def with_ground_truth(body: bytes, ground_truth: str) -> bytes:
    """The request with its turn's body changed after signing (a forger who kept the signature)."""
    request = logs_service_pb2.ExportLogsServiceRequest.FromString(body)
    record = request.resource_logs[0].scope_logs[0].log_records[0]
    run = Trajectory.model_validate_json(record.body.string_value)
    record.body.string_value = run.model_copy(update={"ground_truth": ground_truth}).model_dump_json()
    return bytes(request.SerializeToString())


@pytest.mark.parametrize("workers", [1, 2])
def test_a_replica_that_does_not_route_turns_refuses_every_turn_record(serve, workers: int) -> None:  # type: ignore[no-untyped-def]
    server = serve({"server": {"workers": workers}, "conversations": {"settle": "1s"}, "suites": [SUITE]})
    # The forger's reference answer would turn the conversation's `right` verdict from fail into pass.
    assert post_logs(server, turn_request([a_turn("It shipped.")], b"any secret")) == 200
    server.wait_for_metric("otelgrade_turn_records_total", {"result": "refused"}, 1)
    held = server.metric("otelgrade_conversations_open")
    assert server.stop() == 0
    assert held == 0 and server.grades() == []
    assert "1 turn record(s) refused: 1x this replica does not route turns" in server.log()


def test_a_routing_replica_holds_only_records_its_secret_signs_and_never_a_ground_truth(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    token = tmp_path / "turn-token"
    token.write_bytes(SECRET + b"\n")
    server = serve({"conversations": {"settle": "1s"}, "suites": [SUITE]}, ready=False)
    routing = {"route_turns": f"http://127.0.0.1:{server.http_port}", "turn_token_file": str(token)}
    server.write_config({**server.config, "conversations": {"settle": "1s", **routing}})
    server.wait_ready()
    signed = turn_request([a_turn()], SECRET)
    post_logs(server, turn_request([a_turn()], b"not the replicas' secret"))
    post_logs(server, with_ground_truth(signed, "It shipped."))  # the signature no longer matches
    post_logs(server, turn_request([a_turn("It shipped.")], SECRET))  # ground truth stripped before signing
    server.wait_for_metric("otelgrade_conversations_graded_total", None, 1)
    refused = server.metric("otelgrade_turn_records_total", {"result": "refused"})
    assert server.stop() == 0
    assert refused == 2
    log = server.log()
    assert "1x its signature is not the replicas' (conversations.turn_token_file)" in log
    # The one record held is graded without the reference it was sent with: its verdict stays a fail.
    assert [(g["conversation_id"], g["outcome"]) for g in server.grades()] == [("forged", "fail")]


def test_routing_turns_needs_the_replicas_secret() -> None:
    with pytest.raises(ConfigError, match="route_turns needs turn_token_file"):
        parse_config({"conversations": {"route_turns": "http://router:4318"}})
