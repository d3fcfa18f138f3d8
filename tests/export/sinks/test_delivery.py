"""A sink's endpoint cannot hold the service: the webhook sink reads at most a small part of an answer, gives every
delivery one deadline (connect, send, answer), waits out a `Retry-After` only up to `max_retry_after`, does not
follow redirects, and `serve` stops within `server.shutdown_timeout` whatever the endpoint does, counting and
logging what it could not deliver."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from otelgrade.core.metrics import Metrics
from otelgrade.export.sinks._delivery import MAX_ANSWER_BYTES
from otelgrade.export.sinks.webhook import DEFAULT_MAX_RETRY_AFTER, retry_after
from tests.conftest import ServeProcess
from tests.export.sinks.test_webhook import dropped, run, webhook
from tests.export.ui.test_runlog import booking_run
from tests.hostile_http import GIB, Behaviour, HostileReceiver, peak_rss_mib, wait_until
from tests.webhook_receiver import Receiver

ENDPOINT_ALLOWANCE = 60  # seconds a sink's endpoint may take, far past `shutdown_timeout`
SUITE = {
    "name": "booking",
    "match": {"service.name": "booking-agent"},
    "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
}


@pytest.mark.parametrize("status", [200, 500])
def test_an_answer_of_one_gib_is_read_to_a_small_bound_and_dropped(status: int) -> None:
    """Before: the whole GiB was read (RSS of the service to 2.1 GB at 200, 4.2 GB at 500)."""
    metrics = Metrics()
    with HostileReceiver("huge", status=status) as receiver:
        sink = webhook(receiver.url, metrics, max_retries=0, timeout="20s")
        sink.write_run(run(1, "fail"))
        outcome = "otelgrade_sink_delivered_total" if status == 200 else "otelgrade_sink_dropped_total"
        labels = {"sink": "webhook"} if status == 200 else {"sink": "webhook", "reason": "gave_up"}
        wait_until(lambda: metrics.registry.get_sample_value(outcome, labels) == 1, 20, f"{outcome}{labels} 1")
        sink.close()
        assert receiver.closed_early.wait(10)  # the sink hung up on the rest
        assert receiver.sent < GIB // 16, f"{receiver.sent:,} bytes of the answer were taken"


@pytest.mark.parametrize("behaviour", ["drip", "hang"])
def test_one_deadline_per_delivery_however_the_answer_comes(behaviour: str) -> None:
    """A receiver that drips its answer one byte every 0.2 s, or never answers: each attempt ends at `timeout`.
    Before: the timeout was per read, and the drip held the delivery until its 140 bytes were in (28 s)."""
    metrics = Metrics()
    with HostileReceiver("drip" if behaviour == "drip" else "hang", interval=0.2, size=100) as receiver:
        sink = webhook(receiver.url, metrics, max_retries=1, timeout="1s")
        began = time.monotonic()
        sink.write_run(run(1, "fail"))
        wait_until(lambda: dropped(metrics, "gave_up") == 1, 8, "two attempts given up")
        took = time.monotonic() - began
        sink.close()
    assert receiver.requests == 2
    assert took < 4.0, f"two attempts of at most 1 s took {took:.1f} s"


def test_retry_after_is_capped_by_a_setting(caplog: pytest.LogCaptureFixture) -> None:
    """A receiver asking to wait an hour is retried after `max_retry_after`. Before: waited up to 3,600 s."""
    metrics = Metrics()
    with Receiver() as receiver:
        receiver.script(503, 503, headers={"Retry-After": "3600"})
        sink = webhook(receiver.url, metrics, max_retry_after="300ms", max_retries=1)
        began = time.monotonic()
        sink.write_run(run(1, "fail"))  # two attempts, both told to wait an hour: given up after 0.3 s
        sink.write_run(run(2, "fail"))
        assert receiver.wait_for(1) == [run(2, "fail").key]
        took = time.monotonic() - began
        sink.close()
    assert receiver.answered == [503, 503, 200]
    assert took < 3.0 and dropped(metrics, "gave_up") == 1
    assert retry_after("86400", 0.0) == DEFAULT_MAX_RETRY_AFTER == 120.0  # the default: two minutes


def test_a_redirect_is_not_followed_and_counted_rejected(caplog: pytest.LogCaptureFixture) -> None:
    """A 3xx would carry the message (its signature, its API key header) somewhere not configured: it is dropped
    as `rejected`, the log naming where the receiver points to."""
    metrics = Metrics()
    with Receiver() as receiver, Receiver() as elsewhere:
        receiver.script(307, headers={"Location": elsewhere.url})
        sink = webhook(receiver.url, metrics)
        with caplog.at_level(logging.ERROR, logger="otelgrade.sinks"):
            sink.write_run(run(1, "fail"))
            sink.write_run(run(2, "fail"))
            receiver.wait_for(1)
        sink.close()
    assert receiver.answered == [307, 200] and elsewhere.answered == []
    assert dropped(metrics, "rejected") == 1
    assert f"redirect to {elsewhere.url} not followed" in caplog.text


def test_the_answer_bound_is_small() -> None:
    assert MAX_ANSWER_BYTES <= 64 * 1024


# --- through a live serve ------------------------------------------------------------------------


def _tree_peak_rss_mib(pid: int) -> float:
    """The largest peak RSS of a process and its children (the grading workers, which hold the sinks)."""
    children = [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
    return max(peak_rss_mib(p) for p in [pid, *children])


@pytest.mark.integration
@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_stays_small_and_healthy_while_a_webhook_answers_one_gib(
    serve: Callable[..., ServeProcess], workers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTELGRADE_WORKERS", workers)
    with HostileReceiver("huge", status=500) as receiver:
        sink = {"type": "webhook", "url": receiver.url, "max_retries": 0, "timeout": "20s"}
        server = serve({"suites": [SUITE], "sinks": [sink]})
        booking_run(server.grpc_address, 2)  # a passing run: graded, nothing sent (the service warmed up)
        server.wait_for_metric("otelgrade_grades_total", {"suite": "booking"}, 1)
        before = _tree_peak_rss_mib(server.process.pid)
        with server.health_probe() as probes:
            booking_run(server.grpc_address, 1)
            server.wait_for_metric("otelgrade_sink_dropped_total", {"sink": "webhook", "reason": "gave_up"}, 1, 30)
        grown = _tree_peak_rss_mib(server.process.pid) - before
        assert server.stop() == 0
    assert grown < 16, f"peak RSS grew {grown:.0f} MiB"
    assert probes and max(probes) < 1.0, f"/healthz took up to {max(probes):.1f} s"
    assert receiver.closed_early.is_set()


@pytest.mark.integration
@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("behaviour", ["drip", "hang", "otlp"])
def test_serve_stops_within_shutdown_timeout_whatever_the_sink_endpoint_does(
    serve: Callable[..., ServeProcess], behaviour: str, workers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`shutdown_timeout: 1s`, the endpoint's own allowance a minute (the webhook's `timeout` and `shutdown_flush`,
    the OTLP exporter's timeout), so that a stop waiting on the endpoint stands far from one that does not, however
    loaded the machine. Before, with the defaults (10 s and 5 s): 16.1 s (webhook dripping), 10.1 s (hanging),
    11.6 and 10.6 s with 2 workers; 1.27 s without the webhook."""
    monkeypatch.setenv("OTELGRADE_WORKERS", workers)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", str(ENDPOINT_ALLOWANCE))
    answer: Behaviour = "drip" if behaviour == "drip" else "hang"
    with HostileReceiver(answer, interval=0.5, size=100) as receiver:
        if behaviour == "otlp":
            sink = {"type": "otlp", "endpoint": f"http://127.0.0.1:{receiver.port}/v1/traces"}
        else:
            allowance = f"{ENDPOINT_ALLOWANCE}s"
            sink = {"type": "webhook", "url": receiver.url, "timeout": allowance, "shutdown_flush": allowance}
        server = serve({"server": {"shutdown_timeout": "1s"}, "suites": [SUITE], "sinks": [sink]})
        booking_run(server.grpc_address, 1)
        if behaviour != "otlp":
            assert receiver.requested.wait(20)
        else:
            server.wait_for_metric("otelgrade_grades_total", {"suite": "booking"}, 1)
        began = time.monotonic()
        assert server.stop(timeout=ENDPOINT_ALLOWANCE) == 0
        took = time.monotonic() - began
    # 1 s of shutdown_timeout and the process's own exit (1.3 s unloaded); the endpoint would hold it a minute
    assert took < 8.0, f"stopped after {took:.1f} s"
    if behaviour == "otlp":
        assert "did not take the last grades within" in server.log()
    else:
        assert "webhook sink: 1 message(s) not delivered at shutdown" in server.log()
