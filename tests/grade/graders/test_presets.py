"""The shipped judge presets, through the real `openai` client against the scripted OpenAI-compatible server,
on real captured runs: what the model is asked, how its answer becomes the grade, and the rules every judge
follows (outage, sampling, budget, runs whose trace lacks what the criteria read)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import GradeResult, build_grader
from otelgrade.grade.graders.base import is_judge
from tests.fake_openai import FakeOpenAI, Reply
from tests.grade.graders.test_health import captured
from tests.grade.judges.test_runner import api_key, fake, make_runner, user_text, value
from tests.paths import REPO

__all__ = ["api_key", "fake"]  # fixtures, used by name

PROMPTS = REPO / "otelgrade/grade/graders/prompts"
# preset -> the parts of the run its prompt shows the model
PRESETS = {
    "task_completion_judge": ("input", "trajectory"),
    "answer_relevance_judge": ("input", "output"),
    "groundedness_judge": ("trajectory", "output"),
    "tool_selection_judge": ("input", "trajectory"),
}


def judged_by(fake: FakeOpenAI, name: str, runs: list[Trajectory], **params: Any) -> tuple[list[GradeResult], Metrics]:
    """The preset's grades of these runs, built and called as a suite does, its judge runner on the fake."""
    runner, metrics = make_runner(fake.base_url)
    grader = build_grader(name, params, name=name, judges=runner)
    assert is_judge(grader)

    async def go() -> list[GradeResult]:
        await runner.start()
        try:
            grades = []
            for run in runs:  # one after another, as a budget sees them
                verdict = grader(run)
                grades.append(verdict if isinstance(verdict, GradeResult) else await asyncio.wrap_future(verdict))
            return grades
        finally:
            await runner.close()

    return asyncio.run(go()), metrics


def happy_run() -> Trajectory:
    """pydantic-ai books a flight: two tools (search, then book), then the answer."""
    ((_, run),) = captured("traces/pydantic-ai-v5", "happy")
    return run


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_model_gets_the_presets_criteria_and_the_run_and_its_score_is_the_grade(
    fake: FakeOpenAI, name: str
) -> None:
    ((expected, run),) = captured("traces/pydantic-ai-v5", "happy")  # two tools (search, then book), an answer
    criteria = (PROMPTS / f"{name.removesuffix('_judge')}.txt").read_text().splitlines()[0]
    fake.default = Reply.grade(0.8, "booked as asked")

    (result,), _ = judged_by(fake, name, [run])
    (strict,), _ = judged_by(fake, name, [run], threshold=0.9)

    assert (result.outcome, result.score, result.rationale) == ("pass", 0.8, "booked as asked")
    assert (strict.outcome, strict.score) == ("fail", 0.8)
    body = fake.requests[0]
    asked = user_text(body)
    assert criteria in asked and "Score anchors:" in asked
    assert not any(p in asked for p in ("{input}", "{submission}", "{trajectory}"))
    shown = PRESETS[name]
    if "input" in shown:
        assert expected["input"] in asked
    if "output" in shown:
        assert expected["output"] in asked
    if "trajectory" in shown:  # the tool calls and what they returned
        assert all(c["name"] in asked and c["result"] in asked for c in expected["tool_calls"])
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["rationale", "score"]


def test_an_outage_is_an_error_not_a_failure(fake: FakeOpenAI) -> None:
    fake.default = Reply.error(503, "overloaded")
    (result,), metrics = judged_by(fake, "task_completion_judge", [happy_run()])

    assert result.outcome == "error" and not result.passed and "HTTP 503" in result.rationale
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="server_error") == 3


def test_presets_are_sampled_and_budgeted_like_every_judge(fake: FakeOpenAI) -> None:
    (unsampled,), _ = judged_by(fake, "groundedness_judge", [happy_run()], sample=0.0)
    assert unsampled.outcome == "skipped" and unsampled.metadata["reason"] == "not_sampled"
    assert fake.requests == []

    runs = [run for _, run in captured("frameworks/pydantic-ai", "two_runs")]
    # one answer costs 100 + 20 tokens: the budget allows one
    graded, metrics = judged_by(fake, "answer_relevance_judge", runs, budget={"tokens": 100})

    assert [g.outcome for g in graded] == ["pass", "skipped"]
    assert value(metrics, "otelgrade_judge_skipped_runs_total", grader="answer_relevance_judge", reason="budget") == 1


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_run_whose_trace_lacks_the_content_is_skipped_without_asking(fake: FakeOpenAI, name: str) -> None:
    """OpenAI's instrumentation with its default settings records no message content."""
    ((expected, run),) = captured("frameworks/openai-v2-default", "tool_error")
    assert {"input", "output", "tool_arguments", "tool_results"} <= set(expected["lacks"])

    (result,), _ = judged_by(fake, name, [run])

    assert result.outcome == "skipped" and "content not captured" in result.rationale
    assert fake.requests == []


def test_presets_load_from_config_and_reject_a_prompt_of_their_own() -> None:
    def suite(grader: dict[str, Any]) -> dict[str, Any]:
        return {"suites": [{"name": "s", "graders": [grader]}]}

    config = parse_config(suite({"name": "done", "type": "task_completion_judge", "sample": 0.1}))
    (spec,) = config.suites[0].graders
    assert (spec.name, spec.type, spec.params) == ("done", "task_completion_judge", {"sample": 0.1})
    assert is_judge(spec.build())
    with pytest.raises(ConfigError, match=r"suites\[0\]\.graders\[0\].*prompt"):
        parse_config(suite({"type": "groundedness_judge", "prompt": "my own criteria"}))
