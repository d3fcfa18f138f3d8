"""Before judges grade history: how many calls each judge would make, and what they would cost.

The estimate walks the same path as grading: every suite routes the runs, every grader picks its runs or calls,
each judge's sample decides by trace id, and each judge renders the prompt it would send; only the model is not
asked. Tokens are counted from the rendered prompts at `CHARS_PER_TOKEN` characters a token (the models' own
tokenizers differ by model and language: treat the figure as an estimate), each answer at the judge's `max_tokens`
or `ANSWER_TOKENS`; dollars come from the shipped price table (`graders/prices.yaml`) and `judge.prices`.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime

from otelgrade.config import Config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import GradeResult
from otelgrade.core.settings import JudgeSettings, Price, SampleRates
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders.health import price_of, shipped_prices
from otelgrade.grade.grading import Grading, Suite
from otelgrade.grade.judges import Judgement, JudgeRequest
from otelgrade.grade.judges.sampling import is_sampled, sample_rate

CHARS_PER_TOKEN = 4
ANSWER_TOKENS = 150  # a JSON verdict with a short rationale


def estimated_tokens(text: str) -> int:
    """Tokens of `text`, estimated from its length."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def request_tokens(request: JudgeRequest) -> int:
    """The estimated input tokens of one judge request: its system and user messages."""
    return estimated_tokens(request.system) + estimated_tokens(request.user)


@dataclass
class JudgeCost:
    """What one configured judge would do: the runs (or calls) routed to it, those in its sample that it would ask
    about, and the tokens and dollars of asking."""

    suite: str
    grader: str
    model: str
    routed: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    price: Price | None = None
    key_missing: str | None = None  # the environment variable its API key would come from, when unset: no calls

    @property
    def usd(self) -> float | None:
        if self.price is None:
            return None
        return (self.input_tokens * self.price.input + self.output_tokens * self.price.output) / 1e6


@dataclass
class _Tally:
    """A judge client that asks no model: it counts what each judge of one suite would send."""

    suite: str
    settings: JudgeSettings
    sample: SampleRates | None
    costs: dict[str, JudgeCost] = field(default_factory=dict)

    def judge(
        self, grader: str, judgement: Judgement, trajectory: Trajectory, sample: SampleRates | None = None
    ) -> GradeResult | Future[GradeResult]:
        controls = judgement.controls
        model = controls.model or self.settings.model
        cost = self.costs.get(grader)
        if cost is None:
            prices = {**shipped_prices(), **self.settings.prices}
            cost = self.costs[grader] = JudgeCost(self.suite, grader, model, price=price_of(model, prices))
            key_env = controls.api_key_env or self.settings.api_key_env
            cost.key_missing = None if os.environ.get(key_env) else key_env
        cost.routed += 1
        rate = sample_rate((self.sample, controls.sample, sample, self.settings.sample), trajectory.environment)
        if cost.key_missing or not is_sampled(trajectory.trace_id, grader, rate):
            return GradeResult.skipped("not asked")
        request = judgement.request(trajectory)
        if isinstance(request, JudgeRequest):
            cost.calls += 1
            cost.input_tokens += request_tokens(request)
            cost.output_tokens += controls.max_tokens or ANSWER_TOKENS
        return GradeResult.skipped("estimated, not asked")


def estimate(config: Config, runs: Sequence[Trajectory], judge_sample: float | None = None) -> list[JudgeCost]:
    """Every judge of the config, with the calls it would make on these runs and their cost."""
    override = SampleRates(judge_sample) if judge_sample is not None else None
    tallies = [_Tally(s.name, config.judge, override) for s in config.suites]
    suites = [
        Suite.build(s.name, s.match, s.graders, tally, level=s.level)
        for s, tally in zip(config.suites, tallies, strict=True)
    ]
    grading = Grading(suites, lambda grades: None, Metrics())
    for run in runs:
        grading.grade(run)
    if grading.grades_conversations():  # the tally answers at once: nothing is awaited
        asyncio.run(grading.grade_conversations_and_wait(runs))
    return [cost for tally in tallies for cost in tally.costs.values()]


def describe(costs: Sequence[JudgeCost], label: str = "") -> str:
    """The estimate as a person reads it before saying yes."""
    lines = [
        f"judges{label}: the calls this would make (estimated: ~{CHARS_PER_TOKEN} characters a token, "
        f"answers at max_tokens or {ANSWER_TOKENS} tokens)"
    ]
    width = max((len(f"{c.suite}/{c.grader}") for c in costs), default=0)
    for c in costs:
        usd = f"~${c.usd:.4f}" if c.usd is not None else f"no price for {c.model!r} (add judge.prices)"
        if c.key_missing:
            usd = f"none: ${c.key_missing} is not set, so its runs are graded skipped"
        lines.append(
            f"  {f'{c.suite}/{c.grader}':<{width}}  {c.model}  {c.calls} call(s) on {c.routed} run(s)  "
            f"~{c.input_tokens} input + ~{c.output_tokens} output tokens  {usd}"
        )
    lines.append(f"  total: {sum(c.calls for c in costs)} call(s), {total_usd(costs)}")
    return "\n".join(lines)


def total_usd(costs: Sequence[JudgeCost]) -> str:
    priced = sum(c.usd or 0.0 for c in costs)
    unpriced = [c for c in costs if c.usd is None and c.calls]
    return f"~${priced:.4f}" + (f" plus {len(unpriced)} judge(s) without a price" if unpriced else "")


def since(runs: Sequence[Trajectory], cutoff: float) -> list[Trajectory]:
    """The runs that ended (else started) at or after `cutoff` (a Unix time); a run with neither time is kept."""
    kept = []
    for run in runs:
        stamp = run.end_time or run.start_time
        if stamp is None or datetime.fromisoformat(stamp).timestamp() >= cutoff:
            kept.append(run)
    return kept
