"""Before judges grade history: the calls each judge would make and their cost, estimated without asking a model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from otelgrade.config import parse_config
from otelgrade.tools.backfill import describe, estimate, since
from tests.trajectories import run

CONFIG = {
    "judge": {"model": "gpt-4o-mini"},
    "suites": [{"name": "s", "graders": [{"name": "helpful", "type": "rubric", "prompt": "Grade it.", "sample": 0.5}]}],
}


def runs(count: int) -> list:  # type: ignore[type-arg]
    return [
        run(output="Booked.", input="Book UA123").model_copy(update={"trace_id": f"{i:032x}"}) for i in range(count)
    ]


def test_a_judge_is_estimated_on_its_sample_of_the_routed_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (cost,) = estimate(parse_config(CONFIG), runs(400))
    assert (cost.suite, cost.grader, cost.model, cost.routed) == ("s", "helpful", "gpt-4o-mini", 400)
    assert 150 < cost.calls < 250
    assert cost.input_tokens > 0 and cost.output_tokens > 0


def test_the_estimate_reads_as_a_person_decides_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    text = describe(estimate(parse_config(CONFIG), runs(10), judge_sample=1.0))
    assert "s/helpful  gpt-4o-mini  10 call(s) on 10 run(s)" in text
    assert "total: 10 call(s)" in text
    monkeypatch.delenv("OPENAI_API_KEY")
    text = describe(estimate(parse_config(CONFIG), runs(10), judge_sample=1.0))
    assert "none: $OPENAI_API_KEY is not set, so its runs are graded skipped" in text


def test_since_keeps_runs_that_ended_after_the_cutoff() -> None:
    old = run().model_copy(update={"end_time": "2020-01-01T00:00:00Z"})
    new = run().model_copy(update={"end_time": datetime.now(UTC).isoformat()})
    cutoff = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    assert since([old, new, run()], cutoff) == [new, run()]
