"""The webhook sink against a real HTTP receiver on 127.0.0.1: one message per failing run, delivered once across a
receiver outage, 4xx not retried, drops counted, signed when a secret is set; and through a live `serve`."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade, Outcome
from otelgrade.core.trajectory import Trajectory
from otelgrade.export.sinks import RunSink, read_sink
from otelgrade.export.sinks.webhook import WebhookSink, retry_after
from otelgrade.grade.gathering import GradedRun
from otelgrade.grade.judges.sampling import is_sampled
from otelgrade.service.server import pages_url
from tests.conftest import ServeProcess
from tests.export.ui.test_runlog import booking_run
from tests.webhook_receiver import Receiver

FAST = {"backoff": "20ms", "max_backoff": "100ms", "max_per_second": 1000, "max_retries": 50}


def run(n: int, *outcomes: Outcome, **fields: Any) -> GradedRun:
    """Run `n`, with one grade per outcome given (graders g0, g1, ...)."""
    trajectory = Trajectory(
        trace_id=f"{n:032x}",
        span_id=f"{n:016x}",
        service_name="booking-agent",
        agent_name="booker",
        input="Book me a table for two " + "please " * 400,
        output="Done: your account was deleted.",
        **fields,
    )
    grades = tuple(
        Grade(
            trajectory.trace_id,
            trajectory.span_id,
            "booking",
            f"g{i}",
            1.0 if outcome == "pass" else 0.0,
            outcome == "pass",
            outcome,
            f"g{i} says {outcome}",
            grader_type="tools_not_called",
            service_name="booking-agent",
            agent_name="booker",
            metadata={"answer": "x" * 5000},
        )
        for i, outcome in enumerate(outcomes)
    )
    return GradedRun(trajectory, grades)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as r:
        yield r


def webhook(url: str, metrics: Metrics, pages_url: str = "http://otelgrade.example:9464", **config: Any) -> WebhookSink:
    sink = read_sink({"type": "webhook", "url": url, **FAST, **config}).linked(pages_url).build(metrics)
    assert isinstance(sink, WebhookSink) and isinstance(sink, RunSink)
    return sink


def dropped(metrics: Metrics, reason: str, sink: str = "webhook") -> float:
    value = metrics.registry.get_sample_value("otelgrade_sink_dropped_total", {"sink": sink, "reason": reason})
    return value or 0.0


def test_every_failing_run_is_delivered_once_across_a_receiver_outage(receiver: Receiver) -> None:
    metrics = Metrics()
    receiver.down()  # connection refused
    sink = webhook(receiver.url, metrics)
    runs = [run(n, "pass", "fail") if n % 2 else run(n, "pass", "error") for n in range(1, 41)]
    for graded in runs:
        sink.write_run(graded)
    time.sleep(0.3)  # several refused attempts
    receiver.up()
    receiver.script(503, 503, headers={"Retry-After": "0"})  # then still failing a while, saying when to retry
    receiver.script(429)
    failing = {graded.key for graded in runs if any(g.outcome == "fail" for g in graded.grades)}
    keys = receiver.wait_for(len(failing))
    sink.close()
    assert Counter(keys) == Counter(failing)  # each failing run once; the runs that only errored: never
    assert receiver.answered[:3] == [503, 503, 429]
    assert metrics.registry.get_sample_value("otelgrade_sink_delivered_total", {"sink": "webhook"}) == len(failing)
    assert all(dropped(metrics, reason) == 0 for reason in ("queue_full", "rejected", "gave_up", "shutdown"))
    for key, body, headers in receiver.accepted:
        assert body["id"] == key == headers["Idempotency-Key"]


def test_a_4xx_is_not_retried_and_counted_dropped(receiver: Receiver) -> None:
    metrics = Metrics()
    receiver.script(400)
    sink = webhook(receiver.url, metrics)
    sink.write_run(run(1, "fail"))
    sink.write_run(run(2, "fail"))
    keys = receiver.wait_for(1)
    sink.close()
    assert receiver.answered == [400, 200]
    assert keys == [run(2, "fail").key]
    assert dropped(metrics, "rejected") == 1
    assert metrics.registry.get_sample_value("otelgrade_sink_errors_total", {"sink": "webhook"}) == 1


def test_a_full_queue_drops_and_counts_and_shutdown_flush_is_bounded(receiver: Receiver) -> None:
    metrics = Metrics()
    receiver.down()
    sink = webhook(receiver.url, metrics, queue_size=3, backoff="10s", max_backoff="10s", shutdown_flush=0)
    for n in range(10):
        sink.write_run(run(n, "fail"))
    assert dropped(metrics, "queue_full") == 7
    began = time.monotonic()
    sink.close()  # the one being retried waits for a backoff of 10 s: shutdown does not
    assert time.monotonic() - began < 5
    assert dropped(metrics, "shutdown") == 3
    sink.write_run(run(11, "fail"))  # after close: counted, not queued
    assert dropped(metrics, "shutdown") == 4


def test_retries_end_and_are_counted(receiver: Receiver) -> None:
    metrics = Metrics()
    receiver.script(500, 502, 503)
    sink = webhook(receiver.url, metrics, max_retries=2)
    sink.write_run(run(1, "fail"))
    sink.write_run(run(2, "fail"))
    keys = receiver.wait_for(1)
    sink.close()
    assert receiver.answered == [500, 502, 503, 200]
    assert keys == [run(2, "fail").key]
    assert dropped(metrics, "gave_up") == 1


def test_the_message_schema_1_bounded_signed_and_linked(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_SECRET", "s3cret")
    sink = webhook(receiver.url, Metrics(), secret_env="HOOK_SECRET", headers={"X-Api-Key": "k"}, excerpt_chars=100)
    graded = run(7, "pass", "fail", "skipped")
    sink.write_run(graded)
    receiver.wait_for(1)
    sink.close()
    [(key, body, headers)] = receiver.accepted
    assert headers["X-Api-Key"] == "k"
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    signed = hmac.new(b"s3cret", headers["X-Otelgrade-Timestamp"].encode() + b"." + raw, hashlib.sha256)
    assert headers["X-Otelgrade-Signature"] == f"sha256={signed.hexdigest()}"
    assert body["schema"] == 1 and body["id"] == key == f"{7:032x}-{7:016x}-r1-p1"
    assert body["links"] == {"run": f"http://otelgrade.example:9464/runs/{7:032x}", "conversation": None}
    assert body["counts"] == {"pass": 1, "fail": 1, "error": 0, "skipped": 1}
    assert [g["grader"] for g in body["grades"]] == ["g1"]  # the grades that matched the filter, whole records
    [sent] = body["grades"]
    assert set(sent) == set(graded.grades[1].to_dict())
    assert sent["metadata"]["answer"].startswith("x" * 100 + "… [4900 more")
    summary = body["run"]
    assert summary["trace_id"] == f"{7:032x}" and summary["agent_name"] == "booker" and summary["level"] == "run"
    assert summary["output"] == "Done: your account was deleted."
    assert len(summary["input"]) < 200 and "more characters not sent" in summary["input"]
    assert summary["tool_calls"] == 0 and summary["lacks"] == []
    assert body["text"].startswith(f"otelgrade: booking-agent/booker trace {7:032x}: booking/g1 fail: g1 says fail")
    assert body["part"] == 1 and body["waiting"] == []


def test_filters_on_outcome_suite_grader_and_a_sample_by_trace_id(receiver: Receiver) -> None:
    sink = webhook(receiver.url, Metrics(), outcomes=["error", "fail"], graders=["g1"], suites=["booking"])
    sink.write_run(run(1, "fail", "pass"))  # g0 failed: not a grader sent
    sink.write_run(run(2, "pass", "error"))  # g1 errored: sent
    sink.write_run(run(3, "fail", "fail", "skipped"))
    assert receiver.wait_for(2) == [run(2).key, run(3).key]
    sink.close()
    assert [[g["grader"] for g in body["grades"]] for _, body, _ in receiver.accepted] == [["g1"], ["g1"]]

    other = webhook(receiver.url, Metrics(), suites=["support"])
    other.write_run(run(4, "fail"))
    other.close()

    sampled = webhook(receiver.url, Metrics(), sample=0.3, name="review")
    runs = [run(n, "fail") for n in range(100, 300)]
    for graded in runs:
        sampled.write_run(graded)
    chosen = [g.key for g in runs if is_sampled(g.trajectory.trace_id, "sink:review", 0.3)]
    assert 20 < len(chosen) < 120
    receiver.wait_for(2 + len(chosen))
    sampled.close()
    assert receiver.keys()[2:] == chosen


def test_a_level_filter_sends_conversation_grades_only(receiver: Receiver) -> None:
    sink = webhook(receiver.url, Metrics(), levels=["conversation"])
    turn = run(5, "fail")
    whole = run(6, "fail")
    sink.write_run(turn)
    sink.write_run(GradedRun(whole.trajectory, tuple(replace(g, level="conversation") for g in whole.grades)))
    assert receiver.wait_for(1) == [whole.key]
    sink.close()
    assert [g["level"] for g in receiver.accepted[0][1]["grades"]] == ["conversation"]


def test_retry_after_in_seconds_or_as_a_date() -> None:
    now = 1_764_000_000.0  # 2025-11-24 16:00:00 UTC
    assert retry_after("7", now) == 7.0
    assert retry_after("Mon, 24 Nov 2025 16:00:30 GMT", now) == 30.0
    assert retry_after("Mon, 24 Nov 2025 15:00:00 GMT", now) == 0.0  # already past
    assert retry_after("86400", now) == 3600.0  # at most an hour
    assert retry_after("soon", now) is None and retry_after(None, now) is None


def test_config_errors_name_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_SECRET", raising=False)
    with pytest.raises(ConfigError, match="NOT_SET_SECRET, which is not set"):
        parse_config({"sinks": [{"type": "webhook", "url": "http://x", "secret_env": "NOT_SET_SECRET"}]})
    with pytest.raises(ConfigError, match="must start with http"):
        parse_config({"sinks": [{"type": "webhook", "url": "hooks.example.com"}]})
    with pytest.raises(ConfigError, match="outcomes"):
        parse_config({"sinks": [{"type": "webhook", "url": "http://x", "outcomes": ["failed"]}]})
    with pytest.raises(ConfigError, match="levels"):
        parse_config({"sinks": [{"type": "webhook", "url": "http://x", "levels": ["conversations"]}]})


def test_links_go_to_the_external_url_unless_the_sink_names_its_own_page() -> None:
    sinks = [{"type": "webhook", "url": "http://x"}, {"type": "webhook", "url": "http://y", "pages_url": "https://p"}]
    behind_proxy = parse_config({"ui": {"external_url": "https://grades.example.com/"}, "sinks": sinks})
    direct = parse_config({"metrics": {"endpoint": "127.0.0.1:9464", "tls": None}, "sinks": sinks})
    linked = [sink.linked(pages_url(config)) for config in (behind_proxy, direct) for sink in config.sinks]
    assert [getattr(sink, "pages_url", None) for sink in linked] == [
        "https://grades.example.com",
        "https://p",
        "http://127.0.0.1:9464",
        "https://p",
    ]


# --- through a live serve ------------------------------------------------------------------------


def test_serve_delivers_every_failing_run_once_despite_an_outage(
    serve: Callable[..., ServeProcess], receiver: Receiver
) -> None:
    receiver.down()
    suite = {
        "name": "booking",
        "match": {"service.name": "booking-agent"},
        "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
    }
    server = serve({"suites": [suite], "sinks": [{"type": "webhook", "url": receiver.url, **FAST}]})
    traces = [booking_run(server.grpc_address, n) for n in range(10)]
    failing = {t for n, t in enumerate(traces) if n % 2}
    server.wait_for_metric("otelgrade_grades_total", {"suite": "booking", "grader": "safe"}, 10)
    time.sleep(0.3)  # the receiver refuses a while
    receiver.up()
    receiver.wait_for(len(failing))
    server.wait_for_metric("otelgrade_sink_delivered_total", {"sink": "webhook"}, len(failing))  # answers read
    bodies = [body for _, body, _ in receiver.accepted]
    with urllib.request.urlopen(bodies[0]["links"]["run"], timeout=10) as page:  # the link opens the run's page
        html = page.read().decode()
    assert bodies[0]["links"]["run"] == f"{server.metrics_url}/runs/{bodies[0]['run']['trace_id']}"
    assert bodies[0]["run"]["trace_id"] in html and "delete_account" in html
    assert server.stop() == 0
    assert len(receiver.accepted) == len(failing)  # nothing more came at shutdown
    assert Counter(body["run"]["trace_id"] for body in bodies) == Counter(failing)
    assert {(g["grader"], g["outcome"]) for body in bodies for g in body["grades"]} == {("safe", "fail")}
