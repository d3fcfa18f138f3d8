"""Production context on every grade: the run's deployment environment (from its resource) as a capped
`environment` label on the grade metrics, the sampling context on every grade record, the runs routed to a
sampled judge (`otelgrade_runs_eligible_total`), and a suite's `sample` per environment."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.cli import main
from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.settings import UiSettings
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.export.sinks.jsonl import encode_lines
from otelgrade.export.sinks.otlp import evaluation_event
from otelgrade.export.ui import RunStore
from otelgrade.grade.judges.runner import JudgeRunner
from otelgrade.grade.judges.sampling import is_sampled
from otelgrade.pipeline import Pipeline
from otelgrade.tools.offline import read_inputs
from tests.export.ui.test_pages import _get
from tests.fake_openai import FakeOpenAI

NO_KEY = "OTELGRADE_TEST_UNSET_KEY"  # judges configured with this key variable are sampled, then skip: no key


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def run(i: int, environment: str | None = None, **fields: Any) -> Trajectory:
    return Trajectory(
        trace_id=f"{i:032x}",
        span_id=f"{i:016x}",
        service_name="booking-agent",
        input="Book me a flight to Paris",
        output="Booked UA123.",
        environment=environment,
        **fields,
    )


class Sink:
    def __init__(self) -> None:
        self.grades: list[Grade] = []

    def write(self, grades: Sequence[Grade]) -> None:
        self.grades.extend(grades)

    def flush(self) -> None: ...

    def close(self) -> None: ...


def grading(doc: dict[str, Any], metrics: Metrics, judges: Any = None) -> tuple[Pipeline, Sink]:
    sink = Sink()
    return Pipeline(parse_config(doc), metrics, sinks=[sink], **({"judges": judges} if judges else {})), sink


def value(metrics: Metrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}


# --- the environment, from the trace


def test_the_environment_is_read_from_the_resource_the_current_attribute_first(tmp_path: Path) -> None:
    resources = [
        {"deployment.environment.name": "production", "deployment.environment": "prod-legacy"},
        {"deployment.environment": "staging"},
        {},
    ]
    for i, extra in enumerate(resources):
        exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "booking-agent", **extra}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "booking"}
        with provider.get_tracer("agent").start_as_current_span("invoke_agent booking", attributes=attributes):
            pass
        (tmp_path / f"{i}.pb").write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    runs = [next(read_inputs([tmp_path / f"{i}.pb"])) for i in range(len(resources))]
    assert [r.environment for r in runs] == ["production", "staging", None]
    assert runs[0].model_dump()["environment"] == "production"  # in `otelgrade trajectories` output too


# --- the environment label


def test_grade_metrics_and_records_carry_the_environment() -> None:
    metrics = Metrics()
    graded, sink = grading({"suites": [{"name": "booking", "graders": [SAFE]}]}, metrics)
    for i, environment in enumerate(["production", "production", "eval", None]):
        calls = [ToolCall(name="delete_account")] if environment == "eval" else []
        graded.grade(run(i, environment, tool_calls=calls))
    grades = {"suite": "booking", "grader": "safe"}
    assert value(metrics, "otelgrade_grades_total", **grades, outcome="pass", environment="production") == 2
    assert value(metrics, "otelgrade_grades_total", **grades, outcome="fail", environment="eval") == 1
    assert value(metrics, "otelgrade_grades_total", **grades, outcome="pass", environment="unknown") == 1
    assert value(metrics, "otelgrade_grade_score_count", **grades, environment="production") == 2
    assert value(metrics, "otelgrade_runs_graded_total", suite="booking", environment="eval") == 1
    # A new environment's other outcomes start at zero, so its first failure shows in rate().
    assert value(metrics, "otelgrade_grades_total", **grades, outcome="fail", environment="production") == 0
    # The record keeps the environment as the run gave it; a code grader grades every run.
    assert [(g.environment, g.sample_rate, g.sampled) for g in sink.grades] == [
        ("production", 1.0, True),
        ("production", 1.0, True),
        ("eval", 1.0, True),
        (None, 1.0, True),
    ]


def test_environment_values_beyond_the_cap_are_counted_as_other() -> None:
    metrics = Metrics(environment_limit=3)  # `unknown` and two more
    graded, _ = grading({"suites": [{"name": "booking", "graders": [SAFE]}]}, metrics)
    for i, environment in enumerate(["a", "b", "c", "d", None]):
        graded.grade(run(i, environment))
    labels = {"suite": "booking", "grader": "safe", "outcome": "pass"}
    counted = {e: value(metrics, "otelgrade_grades_total", **labels, environment=e) for e in "abcd"}
    assert counted == {"a": 1, "b": 1, "c": None, "d": None}
    assert value(metrics, "otelgrade_grades_total", **labels, environment="other") == 2
    assert value(metrics, "otelgrade_grades_total", **labels, environment="unknown") == 1
    assert (value(metrics, "otelgrade_label_overflow_total", label="environment") or 0) > 0


# --- the sampling context and the eligible counter


def test_runs_routed_to_a_judge_are_counted_eligible_whether_judged_or_not() -> None:
    metrics = Metrics()
    runner = JudgeRunner({"api_key_env": NO_KEY}, metrics)
    judge = {"name": "helpful", "type": "rubric", "prompt": "Is it helpful?"}
    doc = {
        "suites": [
            {"name": "booking", "match": {"service.name": "booking-agent"}, "sample": 0.5, "graders": [SAFE, judge]}
        ]
    }
    graded, sink = grading(doc, metrics, runner)
    for i in range(40):
        graded.grade(run(i, "production"))
    graded.grade(run(99, "production").model_copy(update={"service_name": "other-agent"}))  # not routed
    eligible = {"suite": "booking", "grader": "helpful", "environment": "production"}
    assert value(metrics, "otelgrade_runs_eligible_total", **eligible) == 40
    assert value(metrics, "otelgrade_runs_eligible_total", **{**eligible, "grader": "safe"}) is None
    judged = [g for g in sink.grades if g.grader == "helpful"]
    assert {g.sample_rate for g in judged} == {0.5}
    sampled = [g for g in judged if g.sampled]
    assert 0 < len(sampled) < 40
    # Sampled runs were in the sample even though none could be judged (no key); the others say why not.
    assert {g.metadata["reason"] for g in sampled} == {"no_api_key"}
    assert {g.metadata["reason"] for g in judged if not g.sampled} == {"not_sampled"}


def test_sinks_write_the_environment_and_the_sampling_context() -> None:
    grade = Grade(
        "ab" * 16, "cd" * 8, "booking", "helpful", None, False, "skipped", "not in this judge's sample",
        environment="production", sample_rate=0.05, sampled=False,
    )  # fmt: skip
    line = json.loads(encode_lines([grade]))
    assert (line["environment"], line["sample_rate"], line["sampled"]) == ("production", 0.05, False)
    event = evaluation_event(grade)
    assert (event["otelgrade.sample.rate"], event["otelgrade.sampled"]) == (0.05, False)


# --- `sample` per environment


def sampling(doc: dict[str, Any], trajectory: Trajectory, forced: float | None = None) -> tuple[float, bool]:
    """The rate and sampling decision of the suite's judge `helpful` for this run."""
    runner = JudgeRunner({"api_key_env": NO_KEY, **doc.get("judge", {})}, Metrics(), sample=forced)
    graded, _ = grading({"suites": doc["suites"]}, Metrics(), runner)
    ready, _ = graded.grade(trajectory)
    (grade,) = [g for g in ready if g.grader == "helpful"]
    return grade.sample_rate, grade.sampled


def judge_suite(suite_sample: Any = None, **judge: Any) -> list[dict[str, Any]]:
    block = {"name": "helpful", "type": "rubric", "prompt": "Is it helpful?", **judge}
    suite = {"name": "booking", "graders": [block]}
    return [suite if suite_sample is None else {**suite, "sample": suite_sample}]


def test_a_suites_sample_per_environment_sits_between_the_judge_block_and_the_grader() -> None:
    suites = judge_suite({"eval": 1.0})
    # The suite names eval; production falls through to the judge block's sample.
    assert sampling({"judge": {"sample": 0.0}, "suites": suites}, run(1, "eval")) == (1.0, True)
    assert sampling({"judge": {"sample": 0.0}, "suites": suites}, run(1, "production")) == (0.0, False)
    # `default` covers the environments it does not name; `unknown` is a run without one.
    suites = judge_suite({"unknown": 1.0, "default": 0.0})
    assert sampling({"suites": suites}, run(1)) == (1.0, True)
    assert sampling({"suites": suites}, run(1, "production")) == (0.0, False)
    # A grader's own sample wins over its suite's; `grade --judge-sample` over both.
    suites = judge_suite({"production": 0.0}, sample={"production": 1.0})
    assert sampling({"suites": suites}, run(1, "production")) == (1.0, True)
    assert sampling({"suites": judge_suite({"production": 0.0})}, run(1, "production"), forced=1.0) == (1.0, True)


def test_each_environment_is_judged_at_its_rate_and_the_choice_is_stable_per_trace(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = {
        "judge": {"base_url": fake.base_url, "timeout": 5},
        "suites": judge_suite({"eval": 1.0, "production": 0.05, "default": 0.2}),
    }
    (tmp_path / "otelgrade.yaml").write_text(yaml.safe_dump(config))
    environments = ("eval", "production", "staging")
    runs = [run(i, environments[i % 3]) for i in range(300)]
    (tmp_path / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))

    def grade() -> list[dict[str, Any]]:
        config, runs = str(tmp_path / "otelgrade.yaml"), str(tmp_path / "runs.jsonl")
        main(["grade", "--config", config, "--yes", "--format", "json", runs])
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    first = grade()
    assert len(first) == 300
    assert {(g["environment"], g["sample_rate"]) for g in first} == {
        ("eval", 1.0),
        ("production", 0.05),
        ("staging", 0.2),
    }
    sampled = {e: [g for g in first if g["environment"] == e and g["sampled"]] for e in environments}
    assert len(sampled["eval"]) == 100
    assert 1 <= len(sampled["production"]) <= 15
    assert 8 <= len(sampled["staging"]) <= 35
    # Exactly the sampled runs were sent to the judge, and judged; the others were skipped as not sampled.
    assert len(fake.requests) == sum(len(s) for s in sampled.values())
    assert all(g["outcome"] == "pass" for s in sampled.values() for g in s)
    assert {g["metadata"]["reason"] for g in first if not g["sampled"]} == {"not_sampled"}
    # Another pass over the same runs (a replay, another replica) samples the same ones.
    second = grade()
    assert [(g["trace_id"], g["sampled"]) for g in second] == [(g["trace_id"], g["sampled"]) for g in first]


def test_a_run_sampled_at_a_rate_is_sampled_at_every_higher_one() -> None:
    ids = [f"{i:032x}" for i in range(2000)]
    at = {rate: {t for t in ids if is_sampled(t, "helpful", rate)} for rate in (0.0, 0.05, 0.2, 1.0)}
    assert at[0.0] == set() and at[1.0] == set(ids)
    assert at[0.05] < at[0.2]
    assert 60 <= len(at[0.05]) <= 140  # about 5% of 2000


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        ({"production": 5}, "suites[0].sample: `production: 5` is not a share of runs"),
        ({"production": "5%"}, "suites[0].sample: `production: '5%'` is not a share of runs"),
        ("often", "suites[0].sample: `sample` is a share of runs from 0 to 1"),
        ({}, "one per environment such as {production: 0.05, eval: 1.0, default: 0.2}"),
    ],
)
def test_a_bad_sample_names_the_key_and_the_fix(sample: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"suites": judge_suite(sample)})
    assert message in str(caught.value)


def test_a_graders_own_sample_may_be_per_environment_too() -> None:
    suites = judge_suite(sample={"production": 0.05, "default": 1.0})
    assert sampling({"suites": suites}, run(1, "eval")) == (1.0, True)
    with pytest.raises(ConfigError, match=r"suites\[0\]\.graders\[0\].*`eval: 2` is not a share of runs"):
        parse_config({"suites": judge_suite(sample={"eval": 2})})


def test_the_run_page_shows_the_environment_and_the_sample() -> None:
    store = RunStore(keep=5)
    store.add_run(run(1, "production"))
    store.write(
        [
            Grade("1".zfill(32), "1".zfill(16), "booking", "helpful", None, False, "skipped", "not in this judge's "
                  "sample", environment="production", sample_rate=0.05, sampled=False),
            Grade("1".zfill(32), "1".zfill(16), "booking", "safe", 1.0, True, "pass", "no forbidden tool",
                  environment="production"),
        ]
    )  # fmt: skip
    [(status, page, _)] = asyncio.run(_get(store, UiSettings(), f"/runs/{'1'.zfill(32)}"))
    assert status == 200
    assert "<dt>environment</dt><dd>production</dd>" in page
    assert page.count("% sample") == 1 and "not in its 5% sample" in page
