"""A shadow suite's grades say so (`shadow: true` on every record) and stay off the webhook unless it asks for them:
`otelgrade serve` with a suite and its shadow version failing the same run sends the webhook receiver on
127.0.0.1 the suite's grade only."""

from __future__ import annotations

from tests.export.sinks.test_webhook import FAST, receiver
from tests.export.ui.test_runlog import booking_run
from tests.webhook_receiver import Receiver

__all__ = ["receiver"]  # a fixture, used by name

SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}
SUITES = [
    {"name": "booking", "match": {"service.name": "booking-agent"}, "graders": [SAFE]},
    {"name": "booking_v2", "shadow": True, "match": {"service.name": "booking-agent"}, "graders": [SAFE]},
]


def test_shadow_grades_are_marked_and_kept_off_the_webhook_unless_asked(serve, receiver: Receiver) -> None:  # type: ignore[no-untyped-def]
    with Receiver() as asking:
        sinks = [
            {"type": "webhook", "url": receiver.url, **FAST},
            {"type": "webhook", "name": "shadow", "url": asking.url, "shadow": True, **FAST},
        ]
        server = serve({"suites": SUITES}, ready=False)
        server.write_config({**server.config, "sinks": [*server.config["sinks"], *sinks]})  # beside the JSONL one
        server.wait_ready()
        booking_run(server.grpc_address, 1)  # calls delete_account: both suites fail it
        receiver.wait_for(1)
        asking.wait_for(1)
        assert server.stop() == 0
        shadowed = [(g["suite"], g["shadow"]) for g in asking.accepted[0][1]["grades"]]
    sent = [(g["suite"], g["shadow"]) for g in receiver.accepted[0][1]["grades"]]
    recorded = sorted((g["suite"], g["shadow"]) for g in server.grades())
    assert recorded == [("booking", False), ("booking_v2", True)]
    assert sent == [("booking", False)]  # before: both, and no record said which was the shadow
    assert sorted(shadowed) == [("booking", False), ("booking_v2", True)]
