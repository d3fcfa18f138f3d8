"""Routing runs to suites, grading them, and exporting the grades (no servers involved)."""

from __future__ import annotations

import asyncio

from prometheus_client.openmetrics.exposition import generate_latest as openmetrics

from otelgrade.config import parse_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import GradeResult, grader
from otelgrade.grade.route import match_filter
from otelgrade.pipeline import Pipeline


@grader("test.output_is")
def _output_is(expected: str):
    return lambda t: GradeResult.check(t.output == expected, f"output {t.output!r}")


@grader("test.raises")
def _raises():
    def grade(t: Trajectory) -> GradeResult:
        raise RuntimeError("grader bug")

    return grade


@grader("test.half")
def _half():
    return lambda t: GradeResult.check(True, "half", score=0.5)


def run(**fields) -> Trajectory:
    base = {"trace_id": "ab" * 16, "span_id": "cd" * 8, "service_name": "booking-agent", "agent_name": "booking_v2"}
    return Trajectory(**(base | fields))


class ListSink:
    def __init__(self) -> None:
        self.grades: list[Grade] = []

    def write(self, grades):
        self.grades.extend(grades)

    def flush(self):
        pass

    def close(self):
        pass


def grading(config, metrics: Metrics | None = None, sinks=()) -> Pipeline:
    return Pipeline(config, metrics or Metrics(), sinks=sinks)


def graded(config, trajectory: Trajectory, metrics: Metrics | None = None, sinks=()) -> list[Grade]:
    ready, pending = grading(config, metrics, sinks).grade(trajectory)
    assert not pending
    return ready


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return value or 0.0


def test_match_is_exact_unless_regex_and_reads_attributes():
    t = run(attributes={"deployment.environment": "prod", "tier": 3})
    assert match_filter({"service.name": "booking-agent"})(t)
    assert not match_filter({"service.name": "booking"})(t)  # exact, not a substring
    assert match_filter({"agent_name": "^booking"})(t)
    assert not match_filter({"agent_name": "^support"})(t)
    assert match_filter({"deployment.environment": ["staging", "prod"]})(t)
    assert match_filter({"tier": 3})(t)
    assert not match_filter({"missing.attribute": "x"})(t)
    assert match_filter({})(t)


def test_runs_go_to_every_matching_suite_only():
    config = parse_config(
        {
            "suites": [
                {
                    "name": "booking",
                    "match": {"agent_name": "^booking"},
                    "graders": [{"type": "test.output_is", "expected": "ok"}],
                },
                {
                    "name": "support",
                    "match": {"agent_name": "^support"},
                    "graders": [{"type": "test.output_is", "expected": "ok"}],
                },
                {"name": "all", "graders": [{"name": "answer", "type": "test.output_is", "expected": "no"}]},
            ]
        }
    )
    metrics, sink = Metrics(), ListSink()
    grades = graded(config, run(output="ok"), metrics, [sink])
    assert [(g.suite, g.grader, g.outcome) for g in grades] == [
        ("booking", "test.output_is", "pass"),
        ("all", "answer", "fail"),
    ]
    assert sink.grades == grades
    assert (
        sample(metrics, "otelgrade_grades_total", suite="all", grader="answer", outcome="fail", environment="unknown")
        == 1
    )
    assert sample(metrics, "otelgrade_runs_graded_total", suite="support", environment="unknown") == 0
    assert sample(metrics, "otelgrade_runs_graded_total", suite="booking", environment="unknown") == 1


def test_a_grader_that_raises_is_an_error_and_the_others_still_count():
    config = parse_config(
        {
            "suites": [
                {
                    "name": "s",
                    "graders": [
                        {"name": "bug", "type": "test.raises"},
                        {"name": "ok", "type": "test.output_is", "expected": "x"},
                    ],
                }
            ]
        }
    )
    metrics = Metrics()
    grades = graded(config, run(output="x"), metrics)
    bug, ok = grades
    assert bug.outcome == "error" and "RuntimeError: grader bug" in bug.rationale and not bug.passed
    assert ok.outcome == "pass"
    assert (
        sample(metrics, "otelgrade_grades_total", suite="s", grader="bug", outcome="error", environment="unknown") == 1
    )
    assert (
        sample(metrics, "otelgrade_grades_total", suite="s", grader="bug", outcome="fail", environment="unknown") == 0
    )
    assert sample(metrics, "otelgrade_grader_exceptions_total", suite="s", grader="bug") == 1


def test_threshold_decides_pass_from_score():
    config = parse_config(
        {
            "suites": [
                {
                    "name": "s",
                    "graders": [
                        {"name": "strict", "type": "test.half", "threshold": 0.8},
                        {"name": "lenient", "type": "test.half", "threshold": 0.5},
                    ],
                }
            ]
        }
    )
    strict, lenient = graded(config, run())
    assert (strict.outcome, strict.score) == ("fail", 0.5)
    assert lenient.outcome == "pass"


def test_failures_carry_the_trace_id_as_an_exemplar():
    config = parse_config(
        {"suites": [{"name": "s", "graders": [{"name": "g", "type": "test.output_is", "expected": "y"}]}]}
    )
    metrics = Metrics()
    graded(config, run(output="n", trace_id="0123456789abcdef0123456789abcdef"), metrics)
    text = openmetrics(metrics.registry).decode()
    line = next(
        line
        for line in text.splitlines()
        if line.startswith('otelgrade_grades_total{environment="unknown",grader="g",outcome="fail"')
    )
    assert '# {trace_id="0123456789abcdef0123456789abcdef"} 1.0' in line


def test_offline_grading_gives_the_same_grades_as_live():
    config = parse_config(
        {"suites": [{"name": "s", "graders": [{"name": "g", "type": "test.output_is", "expected": "x"}]}]}
    )
    t = run(output="x", tool_calls=[ToolCall(name="lookup")])
    live = graded(config, t)
    offline = asyncio.run(grading(config).grade_and_wait(t))
    strip = lambda gs: [(g.suite, g.grader, g.outcome, g.score) for g in gs]  # noqa: E731
    assert strip(live) == strip(offline)


def test_traffic_labels_are_capped():
    metrics = Metrics(label_limit=2)
    pipeline = grading(parse_config({"suites": []}), metrics)
    for i in range(5):
        pipeline.grade(run(agent_name=f"agent-{i}"))
    assert sample(metrics, "otelgrade_runs_total", service="other", agent="other") == 3
    assert sample(metrics, "otelgrade_label_overflow_total", label="agent") == 3


def test_a_reload_swaps_suites_and_span_mappings_together():
    mapped = parse_config({"rebuild": {"mappings": [{"match": {"span.name": "agent"}, "role": "agent"}]}})
    pipeline = Pipeline(mapped, Metrics(), sinks=())
    assert len(pipeline.dialects) == 1
    pipeline.install(pipeline.prepare(pipeline.config))  # the judge runner binds the suites again: mappings stay
    assert len(pipeline.dialects) == 1
    pipeline.install(pipeline.prepare(parse_config({"suites": []})))  # a reload to a config without mappings
    assert pipeline.dialects == ()
