"""Settings models for every step of the pipeline, and the duration syntax they share.

A leaf: it imports nothing of otelgrade, so any step can take its settings without loading the others.
Plugins (receivers, sinks, grader types) keep their own settings beside their code.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: Any) -> float:
    """`2s`, `150ms`, `10m`, `1h`, `1d` or a number of seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string such as '2s', '500ms', '10m'")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a duration; write e.g. '2s', '500ms', '10m', '1d' or a number of seconds")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def _duration_or_none(value: Any) -> Any:
    return None if value is None else parse_duration(value)


Duration = Annotated[float, BeforeValidator(parse_duration)]
"""Seconds, written as a number or as `2s`, `500ms`, `10m`, `1d`."""


class Strict(BaseModel):
    """A settings block: unknown keys are errors (a misspelled key must not be ignored silently)."""

    model_config = ConfigDict(extra="forbid")


class ReceiverSettings(BaseModel):
    """`receivers:` — where OTLP arrives: `<receiver>: host:port` for each registered receiver (null turns it
    off; an absent one listens on its default address), and the limits they share."""

    model_config = ConfigDict(extra="allow")

    max_request_bytes: int = Field(20 * 1024 * 1024, gt=0)  # as the OpenTelemetry Collector


class MetricsSettings(Strict):
    """`metrics:` — the Prometheus endpoint (also /healthz and /readyz)."""

    endpoint: str | None = "0.0.0.0:9464"
    label_limit: int = Field(200, gt=0)


class AssemblySettings(Strict):
    """`assembly:` — when a trace's run is complete, and how much may be held."""

    settle: Duration = 2.0
    idle_timeout: Duration = 30.0
    max_trace_duration: Duration = 600.0
    max_traces: int = Field(50_000, gt=0)
    max_spans_per_trace: int = Field(10_000, gt=0)
    decision_cache_size: int = Field(100_000, gt=0)


class Price(Strict):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class Budget(Strict):
    """A spend limit per period: tokens, money (USD by the `judge.prices` table), or both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: int | None = Field(None, gt=0)
    usd: float | None = Field(None, gt=0)
    period: Duration = Field(86400.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"tokens": value} if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _some_limit(self) -> Budget:
        if self.tokens is None and self.usd is None:
            raise ValueError("a budget needs `tokens` or `usd` (and optionally `period`, default 1d)")
        return self


class JudgeControls(Strict):
    """One judge grader's own limits and endpoint; None means "as the global `judge:` block says"."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sample: float | None = Field(None, ge=0.0, le=1.0)
    max_concurrency: int | None = Field(None, gt=0)
    rpm: float | None = Field(None, gt=0)
    tpm: int | None = Field(None, gt=0)
    budget: Budget | None = None
    model: str | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    provider: Literal["openai"] = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    max_retries: int | None = Field(None, ge=0)
    timeout: Annotated[float | None, BeforeValidator(_duration_or_none)] = Field(None, gt=0)
    reasoning_effort: str | None = None
    max_tokens: int | None = Field(None, gt=0)


class JudgeSettings(Strict):
    """`judge:` — the default endpoint and model, and the limits every judge grader shares."""

    model: str = "gpt-4o-mini"
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    sample: float = Field(1.0, ge=0.0, le=1.0)
    max_concurrency: int = Field(8, gt=0)
    queue_size: int = Field(1000, gt=0)
    rpm: float | None = Field(None, gt=0)
    tpm: int | None = Field(None, gt=0)
    budget: Budget | None = None
    prices: dict[str, Price] = Field(default_factory=dict)
    max_retries: int = Field(3, ge=0)
    timeout: Duration = Field(60.0, gt=0)
    backoff: Duration = Field(0.5, gt=0)  # first retry delay; doubles per attempt, with jitter
    max_backoff: Duration = Field(30.0, gt=0)  # also the longest Retry-After honoured before giving up

    @model_validator(mode="after")
    def _priced(self) -> JudgeSettings:
        if self.budget is not None and self.budget.usd is not None and self.model not in self.prices:
            raise ValueError(
                f"a budget in usd needs a price for {self.model!r}: add judge.prices.{self.model}: {{input: <USD per "
                "1M input tokens>, output: <USD per 1M output tokens>}"
            )
        return self
