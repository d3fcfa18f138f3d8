"""One `/metrics` for a service of several grading workers: what each process counts, added up."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from otelgrade.core.metrics import Metrics
from otelgrade.service.workers.merge import Merged, read_snapshot, snapshot


def merged(*processes: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], Any]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Merged([read_snapshot(snapshot(m.registry)) for m in processes]))
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_counts_add_up_and_failing_grades_keep_a_trace_id() -> None:
    one, two = Metrics(), Metrics()
    one.spans_received.labels("grpc").inc(10)
    two.spans_received.labels("grpc").inc(5)
    one.grades.labels("s", "g", "fail", "prod").inc(1, exemplar={"trace_id": "aa" * 16})
    two.grades.labels("s", "g", "fail", "prod").inc(2)
    one.grading_delay.observe(0.3)
    two.grading_delay.observe(0.3)
    two.grading_delay.observe(100)
    one.traces_in_flight.set(7)
    two.traces_in_flight.set(3)
    samples = merged(one, two)
    assert samples[("otelgrade_spans_received_total", (("protocol", "grpc"),))].value == 15
    failing = samples[
        ("otelgrade_grades_total", (("environment", "prod"), ("grader", "g"), ("outcome", "fail"), ("suite", "s")))
    ]
    assert failing.value == 3
    assert failing.exemplar.labels == {"trace_id": "aa" * 16}
    assert samples[("otelgrade_grading_delay_seconds_count", ())].value == 3
    assert samples[("otelgrade_grading_delay_seconds_bucket", (("le", "+Inf"),))].value == 3
    assert samples[("otelgrade_traces_in_flight", ())].value == 10


def test_a_fact_every_worker_states_is_shown_once() -> None:
    one, two = Metrics(), Metrics()
    for m in (one, two):
        m.judge_paused.labels("helpful").set(1)
    samples = merged(one, two)
    assert samples[("otelgrade_judge_paused", (("grader", "helpful"),))].value == 1


def test_series_only_some_workers_have_are_shown_and_the_others_added_whatever_their_order() -> None:
    one, two, three = Metrics(), Metrics(), Metrics()
    one.runs_graded.labels("a", "prod").inc(1)
    two.runs_graded.labels("b", "prod").inc(2)
    two.runs_graded.labels("a", "prod").inc(3)
    three.runs_graded.labels("a", "prod").inc(4)
    samples = merged(one, two, three)
    assert samples[("otelgrade_runs_graded_total", (("environment", "prod"), ("suite", "a")))].value == 8
    assert samples[("otelgrade_runs_graded_total", (("environment", "prod"), ("suite", "b")))].value == 2
