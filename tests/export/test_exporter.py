"""Grades exported: counted once per series per batch, a failure's trace id as the series' exemplar, later
revisions written to the sinks but not counted again, and a failing sink never stopping the others."""

from __future__ import annotations

from collections.abc import Sequence

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.export.exporter import Exporter


def grade(trace: str, outcome: str, revision: int = 1) -> Grade:
    made = Grade(trace * 32, "b" * 16, "booking", "safe", None, outcome == "pass", outcome, "")  # type: ignore[arg-type]
    made.revision = revision
    return made


class Kept:
    def __init__(self) -> None:
        self.written: list[Grade] = []

    def write(self, grades: Sequence[Grade]) -> None:
        self.written += grades

    def flush(self) -> None: ...

    def close(self) -> None: ...


class Broken(Kept):
    def write(self, grades: Sequence[Grade]) -> None:
        raise OSError("disk full")


def counted(metrics: Metrics, outcome: str) -> float | None:
    labels = {"suite": "booking", "grader": "safe", "outcome": outcome, "environment": "unknown"}
    return metrics.registry.get_sample_value("otelgrade_grades_total", labels)


def test_grades_are_counted_and_a_failure_is_the_series_exemplar() -> None:
    metrics, kept = Metrics(), Kept()
    Exporter(metrics, [Broken(), kept])([grade("1", "pass"), grade("2", "fail"), grade("3", "fail")])
    assert (counted(metrics, "pass"), counted(metrics, "fail"), counted(metrics, "error")) == (1, 2, 0)
    (sample,) = [
        s
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "otelgrade_grades_total" and s.labels["outcome"] == "fail"
    ]
    assert sample.exemplar is not None and sample.exemplar.labels == {"trace_id": "3" * 32}
    assert len(kept.written) == 3  # the broken sink before it did not stop it


def test_a_later_revision_is_written_but_not_counted_again() -> None:
    metrics, kept = Metrics(), Kept()
    Exporter(metrics, [kept])([grade("1", "fail", revision=2)])
    assert counted(metrics, "fail") is None
    assert [g.revision for g in kept.written] == [2]
