"""The judge runner: the `JudgeClient` that sends judge graders' requests to an OpenAI-compatible endpoint, on a
sample of runs, within concurrency, rate and spend limits, off the ingest path, retrying what is worth retrying.

A judge that cannot answer (outage, timeout, malformed or out-of-range answer) gives an `error` grade, never a
`fail`; a run that is not judged (not sampled, queue full, budget spent, no key) is `skipped`.

What a judge answers is kept bounded and clean: its API key is replaced wherever the answer (or an error the
endpoint sent) repeats it, and the rationale and the answer kept in a grade's metadata are cut at
`ANSWER_CHARS` (the prompt at `PROMPT_CHARS`), saying how much was left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import openai

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import GradeResult
from otelgrade.core.settings import Budget, JudgeSettings, SampleRates
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.judges.limits import Ledger, Pacer
from otelgrade.grade.judges.request import Judgement, JudgeRequest, is_reasoning_model
from otelgrade.grade.judges.sampling import is_sampled, sample_key, sample_rate

log = logging.getLogger(__name__)

ANSWER_CHARS = 4096
"""The most of a judge's rationale, and of its raw answer, a grade keeps."""
PROMPT_CHARS = 16384
"""The most of the prompt sent a grade keeps, to show what the judge was asked."""
REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4  # a shorter key is not looked for: it would blank out ordinary words

# Why a run was not judged: the `reason` label of otelgrade_judge_skipped_runs_total, and the rationale.
SKIP_REASONS = {
    "not_sampled": "not in this judge's sample",
    "no_api_key": "judge disabled: no API key",
    "budget": "judge paused: spend budget for this period is used up",
    "no_price": "judge paused: a money budget is set but the model has no entry in judge.prices",
    "queue_full": "judge queue full; run not judged",
    "not_running": "judge runner is not running",
    "shutdown": "judging stopped before this run was graded",
}


@dataclass
class _Lane:
    """One judge grader's resolved settings and runtime state."""

    name: str
    judge: Judgement
    model: str
    base_url: str
    key_env: str
    api_key: str | None
    temperature: float
    max_retries: int
    timeout: float
    semaphore: asyncio.Semaphore | None = None
    rpm: Pacer | None = None
    tpm: Pacer | None = None
    ledger: Ledger | None = None
    priced: bool = True
    paused: bool = False


class JudgeRunner:
    """The `JudgeClient` of a running server or CLI: `judge` from any thread, answers on the runner's loop.

    A judge's sample rate for a run's environment is the first that applies of: `sample` given here (every
    judge's, `grade --judge-sample 1` in CI), the grader's own `sample`, its suite's, the `judge:` block's."""

    def __init__(
        self,
        settings: JudgeSettings | Mapping[str, Any] | None = None,
        metrics: Metrics | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
        sample: float | None = None,
        answers: dict[str, tuple[str | None, list[tuple[str, str]]]] | None = None,
    ) -> None:
        if not isinstance(settings, JudgeSettings):
            settings = JudgeSettings.model_validate(dict(settings or {}))
        self.settings = settings
        self.metrics = metrics if metrics is not None else Metrics()
        self.clock, self.wall, self.jitter = clock, wall, jitter
        self.sample = SampleRates(sample) if sample is not None else None
        # the models' answers by request (`grade --compare`: a judge asked the same by both configs answers once,
        # each config reading the answer with its own threshold)
        self.answers = answers
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._queued = 0
        self._lanes: dict[tuple[str, int], _Lane] = {}
        self._ledgers: dict[tuple[str, Budget], Ledger] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._clients: dict[tuple[str, str], openai.AsyncOpenAI] = {}
        self._warned: set[str] = set()
        self._semaphore = asyncio.Semaphore(settings.max_concurrency)
        self._rpm = Pacer(settings.rpm, clock) if settings.rpm else None
        self._tpm = Pacer(settings.tpm, clock) if settings.tpm else None
        self._ledger = Ledger(settings.budget, wall) if settings.budget else None

    @property
    def enabled(self) -> bool:
        """Whether the global API key is set (graders with their own `api_key_env` may differ)."""
        return bool(os.environ.get(self.settings.api_key_env))

    @property
    def outstanding(self) -> int:
        """Runs accepted by `judge` and not yet answered."""
        return len(self._tasks)

    # --- lifecycle

    async def start(self, judge_graders: Sequence[str] | None = None) -> None:
        """Bind to the running event loop; say once if judging is disabled for want of a key.

        `judge_graders` (the configured judge graders' names) lets the message name them; an empty list
        means none are configured, so there is nothing to warn about yet.
        """
        self._loop = asyncio.get_running_loop()
        self._closed = False
        if not self.enabled and (judge_graders is None or judge_graders):
            self._warn_no_key(self.settings.api_key_env, judge_graders)

    async def close(self, drain: bool = True, timeout: float | None = None) -> None:
        """Stop accepting runs; finish those accepted (`drain`, for at most `timeout` seconds). Runs still
        unanswered then, or all of them without `drain`, are graded `error` (reason `shutdown`). Closes the HTTP
        clients."""
        self._closed = True
        left = set(self._tasks)
        if drain and left:
            _, left = await asyncio.wait(left, timeout=timeout)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    # --- the client interface

    def judge(
        self, grader: str, judgement: Judgement, trajectory: Trajectory, sample: SampleRates | None = None
    ) -> GradeResult | Future[GradeResult]:
        """A `skipped` grade now, or the future answer (resolved on the runner's loop); either carries the sample
        rate that applied and whether the run was sampled. Never blocks; callable from any thread, the loop's
        own included (the offline path awaits the future there)."""
        lane = self._lane(grader, judgement)
        levels = (self.sample, judgement.controls.sample, sample, self.settings.sample)
        rate = sample_rate(levels, trajectory.environment)
        sampled = is_sampled(sample_key(trajectory), lane.name, rate)
        reason = self._refusal(lane) if sampled else "not_sampled"
        loop = self._loop
        if reason is None and (loop is None or self._closed):
            reason = "not_running"
        if reason is None:
            with self._lock:
                full = self._queued >= self.settings.queue_size
                if not full:
                    self._queued += 1
            if full:
                reason = "queue_full"
        if reason is not None or loop is None:
            return _sampled_at(self._skip(lane, reason or "not_running"), rate, sampled)
        self.metrics.judge_queue.inc()
        answer: Future[GradeResult] = Future()
        try:
            loop.call_soon_threadsafe(self._spawn, trajectory, lane, rate, answer)
        except RuntimeError:  # the loop has closed
            self._dequeue()
            return _sampled_at(self._skip(lane, "not_running"), rate)
        return answer

    # --- queueing

    def _spawn(self, trajectory: Trajectory, lane: _Lane, rate: float, answer: Future[GradeResult]) -> None:
        if self._closed:
            self._dequeue()
            answer.set_result(_sampled_at(self._skip(lane, "shutdown"), rate))
            return
        task = asyncio.get_running_loop().create_task(self._run_queued(trajectory, lane, rate, answer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_queued(self, trajectory: Trajectory, lane: _Lane, rate: float, answer: Future[GradeResult]) -> None:
        waiting = True

        def started() -> None:
            nonlocal waiting
            if waiting:
                waiting = False
                self._dequeue()

        try:
            result = await self._judge(trajectory, lane, started)
        except asyncio.CancelledError:
            result = GradeResult.error(
                f"judge {lane.name} stopped at shutdown before it answered (server.shutdown_timeout)", reason="shutdown"
            )
        except Exception as exc:  # a bug, not the judge's answer: still one grade per submitted run
            log.exception("judge %s failed on trace %s", lane.name, trajectory.trace_id)
            result = GradeResult.error(f"judge failed: {type(exc).__name__}: {exc}")
        finally:
            started()
        answer.set_result(_sampled_at(result, rate))

    def _dequeue(self) -> None:
        with self._lock:
            self._queued -= 1
        self.metrics.judge_queue.dec()

    # --- decisions

    def _lane(self, grader_name: str, judge: Judgement) -> _Lane:
        key = (grader_name, id(judge))
        lane = self._lanes.get(key)
        if lane is not None and lane.judge is judge:
            return lane
        with self._lock:
            lane = self._lanes.get(key)
            created = lane is None or lane.judge is not judge
            if lane is None or created:
                lane = self._lanes[key] = self._new_lane(grader_name, judge)
        if created and lane.api_key is None:
            self._warn_no_key(lane.key_env)
        elif created and not lane.priced:
            log.warning("judge %s: a usd budget is set but judge.prices has no %r; not judging", lane.name, lane.model)
        return lane

    def _new_lane(self, name: str, judge: Judgement) -> _Lane:
        s, c = self.settings, judge.controls
        key_env = c.api_key_env or s.api_key_env
        model = c.model or s.model
        return _Lane(
            name=name,
            judge=judge,
            model=model,
            base_url=c.base_url or s.base_url,
            key_env=key_env,
            api_key=os.environ.get(key_env) or None,
            temperature=c.temperature if c.temperature is not None else s.temperature,
            max_retries=c.max_retries if c.max_retries is not None else s.max_retries,
            timeout=c.timeout if c.timeout is not None else s.timeout,
            semaphore=asyncio.Semaphore(c.max_concurrency) if c.max_concurrency else None,
            rpm=Pacer(c.rpm, self.clock) if c.rpm else None,
            tpm=Pacer(c.tpm, self.clock) if c.tpm else None,
            ledger=self._grader_ledger(name, c.budget),
            priced=model in s.prices or not _needs_price(c.budget, s.budget),
        )

    def _grader_ledger(self, name: str, budget: Budget | None) -> Ledger | None:
        """One ledger per grader name and budget, so a config reload does not forget what was spent."""
        if budget is None:
            return None
        key = (name, budget)
        if key not in self._ledgers:
            self._ledgers[key] = Ledger(budget, self.wall)
        return self._ledgers[key]

    def _refusal(self, lane: _Lane) -> str | None:
        """Why a sampled run cannot be judged now, if it cannot."""
        if lane.api_key is None:
            return "no_api_key"
        if not lane.priced:
            return "no_price"
        if self._budget_spent(lane):
            return "budget"
        return None

    def _budget_spent(self, lane: _Lane) -> bool:
        if lane.ledger is None and self._ledger is None:
            return False
        spent = bool((lane.ledger and lane.ledger.spent()) or (self._ledger and self._ledger.spent()))
        if spent != lane.paused:
            lane.paused = spent
            self.metrics.judge_paused.labels(lane.name).set(1 if spent else 0)
            if spent:
                log.warning("judge %s paused: its spend budget for this period is used up", lane.name)
            else:
                log.info("judge %s resumed: a new budget period began", lane.name)
        return spent

    def _skip(self, lane: _Lane, reason: str) -> GradeResult:
        self.metrics.judge_skipped.labels(lane.name, reason).inc()
        return GradeResult.skipped(SKIP_REASONS[reason], reason=reason)

    def _warn_no_key(self, env: str, graders: Sequence[str] | None = None) -> None:
        with self._lock:
            if env in self._warned:
                return
            self._warned.add(env)
        which = f" ({', '.join(graders)})" if graders else ""
        log.warning(
            "LLM judge graders%s are disabled: the environment variable %s is not set. Set it to an API key to "
            "enable them (for another OpenAI-compatible endpoint also set judge.base_url; a local server that "
            "needs no key accepts any value). Until then their runs are graded `skipped`.",
            which,
            env,
        )

    # --- one judgement

    async def _judge(
        self, trajectory: Trajectory, lane: _Lane, started: Callable[[], None] | None = None
    ) -> GradeResult:
        request = lane.judge.request(trajectory)
        if isinstance(request, GradeResult):
            return request
        async with lane.semaphore or contextlib.nullcontext(), self._semaphore:
            if started is not None:
                started()
            if self._budget_spent(lane):
                return self._skip(lane, "budget")
            return await self._call(lane, request)

    async def _call(self, lane: _Lane, request: JudgeRequest) -> GradeResult:
        secrets = [lane.api_key] if lane.api_key and len(lane.api_key) >= MIN_SECRET_CHARS else []
        return _bounded(await self._ask(lane, request), secrets)

    async def _ask(self, lane: _Lane, request: JudgeRequest) -> GradeResult:
        params = self._params(lane, request)
        asked = _asked(lane.base_url, params) if self.answers is not None else ""
        if self.answers is not None and asked in self.answers:
            content, tool_calls = self.answers[asked]
            result = lane.judge.read(content, tool_calls)
            meta = {"model": lane.model, "attempts": 0, "prompt": request.user, "answer": content, "reused": True}
            return result.model_copy(update={"metadata": {**result.metadata, **meta}})
        client = self._client(lane)
        attempts = lane.max_retries + 1
        problem = ""
        for attempt in range(attempts):
            for pacer in (lane.rpm, self._rpm):
                if pacer is not None:
                    await pacer.take()
            for pacer in (lane.tpm, self._tpm):
                if pacer is not None:
                    await pacer.take(0.0)
            begun = self.clock()
            try:
                async with asyncio.timeout(lane.timeout):
                    response = await client.chat.completions.create(**params, timeout=lane.timeout)
            except Exception as exc:
                outcome, retryable, retry_after, problem = _classify(exc, lane.timeout, self.wall())
                self._observe(lane.model, outcome, self.clock() - begun)
                if not retryable or attempt + 1 >= attempts:
                    break
                if retry_after is not None and retry_after > self.settings.max_backoff:
                    problem += f"; Retry-After {retry_after:g}s exceeds judge.max_backoff"
                    break
                await asyncio.sleep(retry_after if retry_after is not None else self._backoff(attempt))
                continue
            latency = self.clock() - begun
            tokens_in, tokens_out = self._account(lane, response)
            content, tool_calls = _answer(response)
            if self.answers is not None:
                self.answers[asked] = (content, tool_calls)
            result = lane.judge.read(content, tool_calls)
            self._observe(lane.model, "ok" if result.outcome != "error" else "invalid_answer", latency)
            meta = {
                "model": lane.model,
                "attempts": attempt + 1,
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "prompt": request.user,  # as sent, so a person can see what the judge was asked
                "answer": content or "\n".join(f"{name}({arguments})" for name, arguments in tool_calls),
            }
            return result.model_copy(update={"metadata": {**result.metadata, **meta}})
        return GradeResult.error(
            f"judge {lane.model} gave no answer after {attempt + 1} attempt(s): {problem}",
            model=lane.model,
            attempts=attempt + 1,
        )

    def _params(self, lane: _Lane, request: JudgeRequest) -> dict[str, Any]:
        c = lane.judge.controls
        params: dict[str, Any] = {"model": lane.model, **request.api_params()}
        if is_reasoning_model(lane.model):
            # Fixed temperature, and the oldest ones refuse a system message: one user message.
            params["messages"] = [{"role": "user", "content": f"{request.system}\n\n{request.user}"}]
            params["temperature"] = 1.0
            if c.reasoning_effort:
                params["reasoning_effort"] = c.reasoning_effort
            if c.max_tokens:
                params["max_completion_tokens"] = c.max_tokens
        else:
            params["messages"] = [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ]
            params["temperature"] = lane.temperature
            if c.max_tokens:
                params["max_tokens"] = c.max_tokens
        return params

    def _client(self, lane: _Lane) -> openai.AsyncOpenAI:
        key = (lane.base_url, lane.api_key or "")
        client = self._clients.get(key)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=lane.api_key, base_url=lane.base_url, max_retries=0, timeout=lane.timeout
            )
            self._clients[key] = client
        return client

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: between half and all of backoff * 2^attempt, capped."""
        ceiling = min(self.settings.max_backoff, self.settings.backoff * 2**attempt)
        return float(ceiling * (0.5 + 0.5 * self.jitter()))

    def _observe(self, model: str, outcome: str, seconds: float) -> None:
        self.metrics.judge_requests.labels(model, outcome).inc()
        self.metrics.judge_latency.labels(model).observe(seconds)

    def _account(self, lane: _Lane, response: Any) -> tuple[int, int]:
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        total = tokens_in + tokens_out
        price = self.settings.prices.get(lane.model)
        usd = (tokens_in * price.input + tokens_out * price.output) / 1e6 if price else 0.0
        self.metrics.judge_tokens.labels(lane.model, "input").inc(tokens_in)
        self.metrics.judge_tokens.labels(lane.model, "output").inc(tokens_out)
        if usd:
            self.metrics.judge_cost.labels(lane.model).inc(usd)
        for ledger in (lane.ledger, self._ledger):
            if ledger is not None:
                ledger.record(total, usd)
        for pacer in (lane.tpm, self._tpm):
            if pacer is not None:
                pacer.spend(total)
        return tokens_in, tokens_out


def _bounded(result: GradeResult, secrets: Sequence[str]) -> GradeResult:
    """The result with the secrets replaced, and its rationale and metadata texts cut to size."""

    def clean(text: str, limit: int) -> str:
        for secret in secrets:
            text = text.replace(secret, REDACTED)
        return cut(text, limit)

    metadata = {
        key: clean(value, PROMPT_CHARS if key == "prompt" else ANSWER_CHARS) if isinstance(value, str) else value
        for key, value in result.metadata.items()
    }
    return result.model_copy(update={"rationale": clean(result.rationale, ANSWER_CHARS), "metadata": metadata})


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how many more were not kept."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters not kept]"


def _sampled_at(result: GradeResult, rate: float, sampled: bool = True) -> GradeResult:
    """The result with its run's sampling context: the rate that applied, and whether the run was in the sample."""
    return result.model_copy(update={"sample_rate": rate, "sampled": sampled})


def _needs_price(*budgets: Budget | None) -> bool:
    return any(b is not None and b.usd is not None for b in budgets)


_FENCE = re.compile(r"data-[0-9a-f]{16}")  # the random marker around a run's content in a judge's prompt


def _asked(base_url: str, params: Mapping[str, Any]) -> str:
    """What a judge is asked, as one string: the same for two requests that differ only in their random markers."""
    return _FENCE.sub("data-", json.dumps([base_url, params], sort_keys=True, default=str))


def _answer(response: Any) -> tuple[str | None, list[tuple[str, str]]]:
    """The first choice's text and its tool calls as (name, arguments JSON)."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return None, []
    message = choices[0].message
    calls = [
        (c.function.name, c.function.arguments or "") for c in message.tool_calls or [] if getattr(c, "function", None)
    ]
    return message.content, calls


def _classify(exc: Exception, timeout: float, now: float) -> tuple[str, bool, float | None, str]:
    """(metric outcome, worth retrying, Retry-After seconds, description) for a failed request."""
    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return "timeout", True, None, f"no answer within {timeout:g}s"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = f"HTTP {status}: {exc.message}"
        retry_after = _retry_after(exc.response.headers, now)
        if status == 429:
            return "rate_limited", True, retry_after, detail
        if status >= 500:
            return "server_error", True, retry_after, detail
        if status in (408, 409):
            return "server_error", True, retry_after, detail
        return "rejected", False, None, detail
    if isinstance(exc, openai.APIConnectionError):
        return "unreachable", True, None, f"cannot reach the judge endpoint ({exc.__cause__ or exc})"
    return "failed", False, None, f"{type(exc).__name__}: {exc}"


def _retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    with contextlib.suppress(TypeError, ValueError):
        if headers.get("retry-after-ms") is not None:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError):
        date = email.utils.parsedate_to_datetime(value)
        return max(0.0, date.timestamp() - now)
    return None
