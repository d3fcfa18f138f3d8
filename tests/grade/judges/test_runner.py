"""LLM judges through the real `openai` client against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import JudgeSettings
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import GradeResult, build_grader
from otelgrade.grade.graders.base import JudgeGrader, innermost
from otelgrade.grade.judges.runner import JudgeRunner
from tests.fake_openai import FakeOpenAI, Reply

# Short timeouts and backoffs keep every retry path well under a second.
FAST = {"timeout": 1.0, "backoff": 0.01, "max_backoff": 2.0, "max_retries": 2}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def run(i: int = 1, output: str | None = "Paris is the capital of France.", **fields: Any) -> Trajectory:
    return Trajectory(
        trace_id=f"{i:032x}", span_id=f"{i:016x}", input="What is the capital of France?", output=output, **fields
    )


def make_runner(base_url: str, **settings: Any) -> tuple[JudgeRunner, Metrics]:
    metrics = Metrics()
    return JudgeRunner(JudgeSettings(base_url=base_url, **{**FAST, **settings}), metrics), metrics


def rubric(**params: Any) -> Any:
    return build_grader("rubric", {"prompt": "Is the answer correct? {input} -> {submission}", **params})


def ask(runner: JudgeRunner, trajectory: Trajectory, name: str, judge: Any) -> GradeResult | Future[GradeResult]:
    """The runner's answer for a grader built with `build_grader` (a JudgeGrader) or a bare judgement."""
    inner = innermost(judge)
    return runner.judge(name, inner.judgement if isinstance(inner, JudgeGrader) else judge, trajectory)


async def judged(runner: JudgeRunner, trajectory: Trajectory, name: str, judge: Any) -> GradeResult:
    """The offline path: ask, and await the answer on the runner's loop."""
    verdict = ask(runner, trajectory, name, judge)
    return verdict if isinstance(verdict, GradeResult) else await asyncio.wrap_future(verdict)


def submit(
    runner: JudgeRunner, trajectory: Trajectory, name: str, judge: Any, done: Callable[[GradeResult], Any]
) -> GradeResult | None:
    """The live path: a grade now, or None and `done(grade)` when the judge answers."""
    verdict = ask(runner, trajectory, name, judge)
    if isinstance(verdict, GradeResult):
        return verdict
    verdict.add_done_callback(lambda f: done(f.result()))
    return None


def evaluate(runner: JudgeRunner, trajectory: Trajectory, judge: Any, name: str = "helpful") -> GradeResult:
    async def go() -> GradeResult:
        await runner.start()
        try:
            return await judged(runner, trajectory, name, judge)
        finally:
            await runner.close()

    return asyncio.run(go())


def value(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


FENCED = re.compile(r"<(data-[0-9a-f]{16})>\n(.*?)\n</\1>", re.DOTALL)


def user_text(body: dict[str, Any]) -> str:
    """The user message, with the run's texts out of the blocks that fence them."""
    return FENCED.sub(r"\2", "\n".join(m["content"] for m in body["messages"] if m["role"] == "user"))


def test_passing_and_failing_judgements(fake: FakeOpenAI) -> None:
    fake.default = lambda body: Reply.grade(0.9, "correct") if "Paris" in user_text(body) else Reply.grade(0.1, "no")
    runner, metrics = make_runner(fake.base_url)
    judge = rubric(threshold=0.5)

    good = evaluate(runner, run(1), judge)
    runner, metrics = make_runner(fake.base_url)
    bad = evaluate(runner, run(2, output="Lyon."), judge)

    assert (good.outcome, good.score, good.passed, good.rationale) == ("pass", 0.9, True, "correct")
    assert (bad.outcome, bad.score, bad.passed) == ("fail", 0.1, False)
    body = fake.requests[0]
    assert "What is the capital of France? -> Paris is the capital of France." in user_text(body)
    assert body["response_format"]["type"] == "json_schema"
    assert body["temperature"] == 0.0 and body["model"] == "gpt-4o-mini"
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="ok") == 1
    assert value(metrics, "otelgrade_judge_tokens_total", model="gpt-4o-mini", kind="input") == 100
    assert value(metrics, "otelgrade_judge_tokens_total", model="gpt-4o-mini", kind="output") == 20


def test_prompt_file_ground_truth_and_per_grader_model(fake: FakeOpenAI, tmp_path: Any) -> None:
    path = tmp_path / "rubric.txt"
    path.write_text('Expected {ground_truth}; got {submission}. JSON example: {"score": 1}')
    judge = build_grader("rubric", {"prompt_path": str(path), "model": "judge-large", "temperature": 0.3})
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(1, ground_truth="Paris"), judge)

    assert result.outcome == "pass"
    body = fake.requests[0]
    assert user_text(body) == 'Expected Paris; got Paris is the capital of France.. JSON example: {"score": 1}'
    assert (body["model"], body["temperature"]) == ("judge-large", 0.3)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply.text("Looks right to me."), "not JSON"),
        (Reply.grade(1.7), "outside 0.0-1.0"),
        (Reply.grade(-0.2), "outside 0.0-1.0"),
        (Reply.grade("high"), "no numeric `score`"),
        (Reply.text('{"rationale": "ok"}'), "no numeric `score`"),
    ],
)
def test_malformed_or_out_of_range_answers_are_errors_not_failures(fake: FakeOpenAI, reply: Reply, why: str) -> None:
    fake.default = reply
    runner, metrics = make_runner(fake.base_url)

    result = evaluate(runner, run(), rubric())

    assert result.outcome == "error" and not result.passed and result.score is None
    assert why in result.rationale
    assert result.metadata["raw_answer"] == reply.content
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="invalid_answer") == 1


def test_timeout_is_an_error_after_retries(fake: FakeOpenAI) -> None:
    fake.default = Reply.grade(1.0, delay=60.0)  # far past the two attempts, however loaded the machine
    runner, metrics = make_runner(fake.base_url, timeout=0.2, max_retries=1)

    started = time.monotonic()
    result = evaluate(runner, run(), rubric())

    assert result.outcome == "error" and "no answer within 0.2s" in result.rationale
    assert time.monotonic() - started < 10.0
    assert len(fake.requests) == 2
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="timeout") == 2


def test_rate_limit_waits_for_retry_after(fake: FakeOpenAI) -> None:
    fake.script(Reply.error(429, "slow down", headers={"Retry-After": "1"}), Reply.grade(0.8))
    runner, metrics = make_runner(fake.base_url)  # backoff is 10 ms: only Retry-After explains a 1 s wait

    result = evaluate(runner, run(), rubric())

    assert result.outcome == "pass" and result.metadata["attempts"] == 2
    assert fake.times[1] - fake.times[0] >= 0.95
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="rate_limited") == 1
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="ok") == 1


def test_retry_after_longer_than_max_backoff_gives_up_at_once(fake: FakeOpenAI) -> None:
    fake.default = Reply.error(429, headers={"Retry-After": "120"})
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(), rubric())

    assert result.outcome == "error" and "Retry-After 120s" in result.rationale
    assert len(fake.requests) == 1


def test_server_errors_are_retried_then_reported_as_errors(fake: FakeOpenAI) -> None:
    fake.script(Reply.error(500), Reply.error(503))
    runner, _ = make_runner(fake.base_url)
    recovered = evaluate(runner, run(), rubric())
    assert recovered.outcome == "pass" and recovered.metadata["attempts"] == 3

    fake.default = Reply.error(500, "backend down")
    runner, metrics = make_runner(fake.base_url)
    outage = evaluate(runner, run(), rubric())

    assert outage.outcome == "error" and not outage.passed
    assert "HTTP 500" in outage.rationale and "3 attempt(s)" in outage.rationale
    assert len(fake.requests) == 3 + 3
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="server_error") == 3


def test_client_errors_are_not_retried(fake: FakeOpenAI) -> None:
    fake.default = Reply.error(401, "bad key")
    runner, metrics = make_runner(fake.base_url)

    result = evaluate(runner, run(), rubric())

    assert result.outcome == "error" and "HTTP 401" in result.rationale
    assert len(fake.requests) == 1
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="rejected") == 1


def test_dead_endpoint_is_an_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    runner, metrics = make_runner(f"http://127.0.0.1:{port}/v1", max_retries=1)

    result = evaluate(runner, run(), rubric())

    assert result.outcome == "error" and "cannot reach" in result.rationale
    assert value(metrics, "otelgrade_judge_requests_total", model="gpt-4o-mini", outcome="unreachable") == 2


def test_agent_judge_grades_through_submit_grade(fake: FakeOpenAI) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        forced = body.get("tool_choice", {}).get("function", {}).get("name")
        names = [t["function"]["name"] for t in body.get("tools", [])]
        if forced == "submit_grade" and names == ["submit_grade"]:
            return Reply.tool_call("submit_grade", {"score": 0.3, "rationale": "partly right"})
        return Reply.text("no tool offered")

    fake.default = respond
    judge = build_grader("agent_judge", {"prompt": "Grade the answer: {submission}", "threshold": 0.5})
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(), judge)

    assert (result.outcome, result.score, result.rationale) == ("fail", 0.3, "partly right")
    assert "response_format" not in fake.requests[0]


def test_agent_judge_that_does_not_call_the_tool_is_an_error(fake: FakeOpenAI) -> None:
    fake.default = Reply.text("I would give it 0.8")
    judge = build_grader("agent_judge", {"prompt": "Grade: {submission}"})
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(), judge)

    assert result.outcome == "error" and "submit_grade" in result.rationale
    assert result.metadata["raw_answer"] == "I would give it 0.8"


def test_trajectory_judge_sees_the_whole_run_and_can_be_pass_fail(fake: FakeOpenAI) -> None:
    fake.default = Reply.text(json.dumps({"rationale": "purposeful steps", "passed": True}))
    trajectory = run(
        1,
        steps=2,
        tool_calls=[ToolCall(name="search_web", arguments={"q": "capital of France"}, result="Paris", step=1)],
    )
    judge = build_grader("trajectory_judge", {"continuous": False})
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, trajectory, judge)

    assert (result.outcome, result.score) == ("pass", 1.0)
    prompt = user_text(fake.requests[0])
    assert 'search_web({"q":"capital of France"})' in prompt and "Paris is the capital of France." in prompt
    assert fake.requests[0]["response_format"]["json_schema"]["schema"]["required"] == ["rationale", "passed"]


def test_trajectory_judge_does_not_need_a_final_answer(fake: FakeOpenAI) -> None:
    fake.default = Reply.grade(0.2, "gave up")
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(output=None), build_grader("llm_trajectory_judge", {}))

    assert (result.outcome, result.score) == ("fail", 0.2)


def test_rubric_without_a_submission_is_an_error_and_sends_nothing(fake: FakeOpenAI) -> None:
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(output=None), rubric())

    assert result.outcome == "error" and "nothing to grade" in result.rationale
    assert fake.requests == []


def test_reasoning_models_get_fixed_temperature_and_no_system_message(fake: FakeOpenAI) -> None:
    runner, _ = make_runner(fake.base_url)

    result = evaluate(runner, run(), rubric(model="o3-mini", reasoning_effort="low", max_tokens=500))

    assert result.outcome == "pass"
    body = fake.requests[0]
    assert body["temperature"] == 1.0 and body["reasoning_effort"] == "low"
    assert body["max_completion_tokens"] == 500 and "max_tokens" not in body
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_sampling_is_deterministic_and_near_the_configured_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")  # sampled runs then stop at "no API key": no network needed
    rng = random.Random(7)
    trace_ids = [f"{rng.getrandbits(128):032x}" for _ in range(2000)]
    judge = rubric(sample=0.2)

    def decisions() -> list[bool]:
        runner = JudgeRunner(JudgeSettings(), Metrics())
        results = [submit(runner, Trajectory(trace_id=t, span_id="0" * 16), "helpful", judge, print) for t in trace_ids]
        assert all(r is not None and r.outcome == "skipped" for r in results)
        return [r is not None and r.metadata["reason"] == "no_api_key" for r in results]

    first, second = decisions(), decisions()

    assert first == second
    # Binomial(2000, 0.2): sd ≈ 17.9; four sd either side.
    assert 400 - 72 <= sum(first) <= 400 + 72
    other = JudgeRunner(JudgeSettings(), Metrics())
    other_grader = [
        submit(other, Trajectory(trace_id=t, span_id="0" * 16), "correct", judge, print).metadata["reason"]  # type: ignore[union-attr]
        == "no_api_key"
        for t in trace_ids
    ]
    assert other_grader != first  # each grader samples its own runs


def test_budget_stops_judging_at_the_configured_spend(fake: FakeOpenAI) -> None:
    now = [1_000_000.0]
    metrics = Metrics()
    settings = JudgeSettings(base_url=fake.base_url, **FAST)
    runner = JudgeRunner(settings, metrics, wall=lambda: now[0])
    judge = rubric(budget={"tokens": 350, "period": "1h"})  # every answer costs 100 + 20 tokens

    async def judge_runs(first: int, count: int) -> list[GradeResult]:
        return [await judged(runner, run(i), "helpful", judge) for i in range(first, first + count)]

    async def go() -> tuple[list[GradeResult], list[GradeResult]]:
        await runner.start()
        before = await judge_runs(0, 6)
        paused = value(metrics, "otelgrade_judge_paused", grader="helpful")
        assert paused == 1
        now[0] += 3600  # the next period
        after = await judge_runs(6, 1)
        await runner.close()
        return before, after

    before, after = asyncio.run(go())

    assert [r.outcome for r in before] == ["pass"] * 3 + ["skipped"] * 3
    assert all(r.metadata["reason"] == "budget" for r in before[3:])
    assert len(fake.requests) == 4
    assert after[0].outcome == "pass"
    assert value(metrics, "otelgrade_judge_paused", grader="helpful") == 0
    assert value(metrics, "otelgrade_judge_skipped_runs_total", grader="helpful", reason="budget") == 3


def test_money_budget_uses_the_price_table(fake: FakeOpenAI) -> None:
    # 100 input tokens at $1000/M + 20 output at $5000/M = $0.20 per judgement; $0.50 allows three.
    prices = {"gpt-4o-mini": {"input": 1000.0, "output": 5000.0}}
    runner, metrics = make_runner(fake.base_url, prices=prices, budget={"usd": 0.5})

    async def go() -> list[str]:
        await runner.start()
        outcomes: list[str] = [(await judged(runner, run(i), "helpful", rubric())).outcome for i in range(5)]
        await runner.close()
        return outcomes

    assert asyncio.run(go()) == ["pass", "pass", "pass", "skipped", "skipped"]
    assert value(metrics, "otelgrade_judge_cost_usd_total", model="gpt-4o-mini") == pytest.approx(0.6)


def test_a_money_budget_needs_a_price() -> None:
    with pytest.raises(ConfigError, match=r"judge\.prices"):
        parse_config({"judge": {"budget": {"usd": 5}}})


class LoopThread:
    """An event loop in a background thread, as the server runs the judge runner."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def test_submit_from_another_thread_reports_through_done(fake: FakeOpenAI) -> None:
    loop = LoopThread()
    runner, _ = make_runner(fake.base_url)
    loop.run(runner.start())
    results: list[GradeResult] = []
    finished = threading.Event()

    def done(result: GradeResult) -> None:
        results.append(result)
        if len(results) == 3:
            finished.set()

    try:
        assert [submit(runner, run(i), "helpful", rubric(), done) for i in range(3)] == [None, None, None]
        assert finished.wait(10)
    finally:
        loop.run(runner.close())
        loop.stop()
    assert [r.outcome for r in results] == ["pass"] * 3


def test_full_queue_skips_and_counts_instead_of_blocking(fake: FakeOpenAI) -> None:
    fake.default = Reply.grade(1.0, delay=0.5)
    loop = LoopThread()
    runner, metrics = make_runner(fake.base_url, max_concurrency=1, queue_size=5)
    loop.run(runner.start())
    done_results: list[GradeResult] = []
    lock = threading.Lock()

    def done(result: GradeResult) -> None:
        with lock:
            done_results.append(result)

    judge = rubric()
    try:
        started = time.monotonic()
        returned = [submit(runner, run(i), "helpful", judge, done) for i in range(200)]
        elapsed = time.monotonic() - started
    finally:
        loop.run(runner.close(drain=False))
        loop.stop()

    accepted = [r for r in returned if r is None]
    skipped = [r for r in returned if r is not None]
    assert elapsed < 0.5  # one slow judge answer takes 0.5 s; 200 submits take far less
    assert 5 <= len(accepted) <= 6  # the queue, plus at most the one run already being judged
    assert all(r.outcome == "skipped" and r.metadata["reason"] == "queue_full" for r in skipped)
    assert value(metrics, "otelgrade_judge_skipped_runs_total", grader="helpful", reason="queue_full") == len(skipped)
    assert len(done_results) == len(accepted)  # every accepted run is reported once, even at shutdown
    assert value(metrics, "otelgrade_judge_queue_length") == 0


def test_requests_per_minute_limit_paces_requests(fake: FakeOpenAI) -> None:
    runner, _ = make_runner(fake.base_url)
    judge = rubric(rpm=600)  # 10 per second, bursting to 10

    async def go() -> float:
        await runner.start()
        began = time.monotonic()
        await asyncio.gather(*(judged(runner, run(i), "helpful", judge) for i in range(15)))
        await runner.close()
        return began

    began = asyncio.run(go())

    assert len(fake.requests) == 15
    # the last five wait 0.1 s each for the bucket (counted from the first send, not from the first arrival,
    # which a loaded machine may delay)
    assert fake.times[-1] - began >= 0.45


def test_without_an_api_key_judges_are_disabled_once_and_runs_skipped(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    runner, metrics = make_runner(fake.base_url)
    judge = rubric()

    async def go() -> list[GradeResult | None]:
        await runner.start()
        out: list[GradeResult | None] = [await judged(runner, run(1), "helpful", judge)]
        out += [submit(runner, run(i), "helpful", judge, print) for i in range(2, 5)]
        await runner.close()
        return out

    with caplog.at_level(logging.WARNING, logger="otelgrade.judging"):
        results = asyncio.run(go())

    assert all(r is not None and r.outcome == "skipped" for r in results)
    disabled = [r for r in caplog.records if "disabled" in r.getMessage()]
    assert len(disabled) == 1 and "OPENAI_API_KEY" in disabled[0].getMessage()
    assert fake.requests == []
    assert value(metrics, "otelgrade_judge_skipped_runs_total", grader="helpful", reason="no_api_key") == 4


def test_judge_config_is_validated_with_the_rest() -> None:
    config = parse_config(
        {
            "judge": {"model": "gpt-4.1-mini", "max_concurrency": 4, "timeout": "30s"},
            "suites": [
                {"name": "s", "graders": [{"name": "helpful", "type": "rubric", "prompt": "ok?", "sample": 0.1}]}
            ],
        }
    )
    assert config.judge.model == "gpt-4.1-mini" and config.judge.timeout == 30.0
    with pytest.raises(ConfigError, match="max_concurency"):
        parse_config({"judge": {"max_concurency": 4}})
    with pytest.raises(ConfigError, match="samples"):
        parse_config({"suites": [{"name": "s", "graders": [{"type": "rubric", "prompt": "ok?", "samples": 0.1}]}]})
    with pytest.raises(ConfigError, match="prompt"):
        parse_config({"suites": [{"name": "s", "graders": [{"type": "rubric"}]}]})
    with pytest.raises(ConfigError, match="sample"):
        parse_config({"suites": [{"name": "s", "graders": [{"type": "rubric", "prompt": "x", "sample": 1.5}]}]})


def test_budget_spent_survives_a_config_reload(fake: FakeOpenAI) -> None:
    runner, _ = make_runner(fake.base_url)
    params = {"budget": {"tokens": 100}}  # one answer (120 tokens) uses it up

    async def go() -> list[str]:
        await runner.start()
        first = await judged(runner, run(1), "helpful", rubric(**params))
        reloaded = await judged(runner, run(2), "helpful", rubric(**params))  # the same grader, rebuilt
        await runner.close()
        return [first.outcome, reloaded.outcome]

    assert asyncio.run(go()) == ["pass", "skipped"]
    assert len(fake.requests) == 1


def test_no_warning_when_no_judge_grader_is_configured(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")

    async def go(names: list[str]) -> None:
        runner = JudgeRunner(JudgeSettings(), Metrics())
        await runner.start(names)
        await runner.close()

    with caplog.at_level(logging.WARNING, logger="otelgrade.judging"):
        asyncio.run(go([]))
        assert caplog.records == []
        asyncio.run(go(["helpful", "efficient_path"]))
    assert "(helpful, efficient_path) are disabled" in caplog.records[0].getMessage()
