"""Webhook sink: POSTs one JSON message per graded run that passes its filter (by default: runs with a failing grade)
to a URL: a chat channel's incoming webhook, a review queue, a ticketing bridge.

The message (`schema: 1`, documented in docs/operations.md) holds the run's matching grade records as they are,
a bounded summary of the run and a link to its page. Delivery runs on a thread of its own behind a bounded queue, so
grading never waits for it: a deterministic sample by trace id, a rate limit, retries with exponential backoff on
connection errors, 408, 429 and 5xx (a `Retry-After` is honoured), none on other 4xx; what it gives up on is counted
in `otelgrade_sink_dropped_total{sink,reason}`. Each message carries an idempotency key, the same on every retry,
replica and restart, so a receiver keeps each run once. At shutdown the queue is flushed for at most
`shutdown_flush` seconds.
"""

from __future__ import annotations

import email.utils
import hashlib
import hmac
import json
import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx2
from pydantic import Field, field_validator, model_validator

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import OUTCOMES, Grade, Level, Outcome
from otelgrade.core.settings import Duration
from otelgrade.core.trajectory import Conversation, conversation_path
from otelgrade.export.sinks import Sink, SinkSettings, sink_type
from otelgrade.export.sinks._burst import ErrorBurst
from otelgrade.grade.gathering import GradedRun
from otelgrade.grade.judges.sampling import is_sampled

log = logging.getLogger("otelgrade.export.sinks")

SCHEMA = 1
DROP_REASONS = ("queue_full", "rejected", "gave_up", "shutdown", "unencodable")
MAX_ITEMS = 20  # of a list inside a grade record (a judge's metadata): the rest are counted, not sent
MAX_RETRY_AFTER = 3600.0  # seconds; a longer Retry-After is taken as this


@sink_type("webhook")
class WebhookSinkSettings(SinkSettings):
    """`{type: webhook, url: https://hooks.example.com/...}`: one message per run with a failing grade."""

    type: Literal["webhook"]
    url: str
    name: str = "webhook"  # the `sink` label of its metrics, to tell several webhooks apart
    # a run is sent when one of its grades has one of these outcomes, and is of the suites, graders, levels listed
    outcomes: list[Outcome] = Field(default_factory=lambda: list[Outcome](["fail"]))
    suites: list[str] = Field(default_factory=list)  # (empty: any)
    graders: list[str] = Field(default_factory=list)
    levels: list[Level] = Field(default_factory=list)
    shadow: bool = False  # also a shadow suite's grades (a version tried beside the one that pages)
    sample: float = Field(1.0, ge=0.0, le=1.0)  # the share of such runs sent, chosen by trace id
    max_per_second: float = Field(1.0, gt=0)  # messages (retries included); bursts up to one second's worth
    queue_size: int = Field(1000, gt=0)  # messages waiting; past it new ones are dropped and counted
    timeout: Duration = Field(10.0, gt=0)  # per request
    max_retries: int = Field(8, ge=0)
    backoff: Duration = Field(1.0, gt=0)  # the first retry's delay, doubled each time
    max_backoff: Duration = Field(60.0, gt=0)
    shutdown_flush: Duration = Field(5.0, ge=0)  # at shutdown, how long the queue may still be delivered
    excerpt_chars: int = Field(1000, gt=0)  # the most of the run's input and output, and of any text in a grade
    headers: dict[str, str] = Field(default_factory=dict)  # sent with every message (e.g. an API key)
    pages_url: str | None = None  # where people reach the grades page; default: ui.external_url, else the server's
    secret_env: str | None = None  # names the environment variable with a shared secret: messages are signed

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"a webhook url must start with http:// or https://, not {url!r}")
        return url

    @model_validator(mode="after")
    def _secret_set(self) -> WebhookSinkSettings:
        if self.secret_env is not None and not os.environ.get(self.secret_env):
            raise ValueError(
                f"secret_env names the environment variable {self.secret_env}, which is not set: set it to the "
                "secret the receiver checks signatures with, or remove secret_env"
            )
        return self

    def build(self, metrics: Metrics) -> Sink:
        return WebhookSink(self, metrics, self.pages_url or "")

    def linked(self, pages_url: str) -> SinkSettings:
        return self if self.pages_url is not None else self.model_copy(update={"pages_url": pages_url})


@dataclass(frozen=True)
class Message:
    """One run's message, encoded, waiting to be delivered."""

    key: str
    body: bytes
    grades: int


class WebhookSink:
    """Thread-safe; `write_run` only encodes and queues, a daemon thread delivers."""

    def __init__(
        self,
        settings: WebhookSinkSettings,
        metrics: Metrics,
        pages_url: str = "",
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.settings, self.pages_url = settings, pages_url.rstrip("/")
        self.clock, self.wall = clock, wall
        name = settings.name
        self._errors = ErrorBurst(name, metrics)
        self._delivered = metrics.sink_delivered.labels(name)
        self._dropped = {reason: metrics.sink_dropped.labels(name, reason) for reason in DROP_REASONS}
        self._secret = os.environ.get(settings.secret_env, "").encode() if settings.secret_env else b""
        self._queue: deque[Message] = deque()
        self._wake = threading.Condition()
        self._closing = False
        self._flush_until = float("inf")
        self._tokens = max(1.0, settings.max_per_second)
        self._refilled = clock()
        self._retrying = False  # an outage is being retried (said once, and once when it ends)
        self._client = httpx2.Client(timeout=settings.timeout, headers={"User-Agent": "otelgrade"})
        self._sender = threading.Thread(target=self._send_all, name=f"otelgrade-{name}", daemon=True)
        self._sender.start()

    # --- Sink protocol

    def write(self, grades: Sequence[Grade]) -> None:
        """Grades one by one are not this sink's unit: it sends whole runs (`write_run`)."""

    def write_run(self, run: GradedRun) -> None:
        chosen = [g for g in run.grades if self._wanted(g)]
        if not chosen or not is_sampled(run.trajectory.trace_id, f"sink:{self.settings.name}", self.settings.sample):
            return
        try:
            body = json.dumps(
                message(run, chosen, self.pages_url, self.settings.excerpt_chars),
                ensure_ascii=False,
                separators=(",", ":"),
                default=str,
            ).encode()
        except (TypeError, ValueError) as exc:
            self._drop("unencodable", len(chosen), exc)
            return
        with self._wake:
            if self._closing:
                reason = "shutdown"
            elif len(self._queue) >= self.settings.queue_size:
                reason = "queue_full"
            else:
                self._queue.append(Message(run.key, body, len(chosen)))
                self._wake.notify()
                return
        self._drop(reason, len(chosen), f"{reason}: {self.settings.queue_size} message(s) already wait")

    def flush(self) -> None:
        """Delivery is continuous; nothing to push."""

    def close(self) -> None:
        """Deliver what waits for at most `shutdown_flush` seconds; count the rest as dropped (`shutdown`)."""
        with self._wake:
            if self._closing:
                return
            self._closing = True
            self._flush_until = self.clock() + self.settings.shutdown_flush
            self._wake.notify_all()
        self._sender.join(timeout=self.settings.shutdown_flush + self.settings.timeout + 1)
        with self._wake:
            left, self._queue = list(self._queue), deque()
        for waiting in left:
            self._drop("shutdown", waiting.grades, "not delivered within shutdown_flush")
        self._client.close()

    @property
    def waiting(self) -> int:
        """Messages queued or being delivered."""
        return len(self._queue)

    # --- which runs

    def _wanted(self, grade: Grade) -> bool:
        s = self.settings
        return (
            grade.outcome in s.outcomes
            and (not s.suites or grade.suite in s.suites)
            and (not s.graders or grade.grader in s.graders)
            and (not s.levels or grade.level in s.levels)
            and (s.shadow or not grade.shadow)
        )

    # --- delivery (the sender thread)

    def _send_all(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._closing:
                    self._wake.wait()
                if not self._queue or self._past_flush():
                    return
                head = self._queue[0]
            self._deliver(head)
            with self._wake:
                if self._queue and self._queue[0] is head:
                    self._queue.popleft()

    def _deliver(self, msg: Message) -> None:
        s = self.settings
        for attempt in range(s.max_retries + 1):
            if not self._pace():
                self._drop("shutdown", msg.grades, "not delivered within shutdown_flush")
                return
            try:
                response = self._client.post(s.url, content=msg.body, headers=self._headers(msg))
            except httpx2.HTTPError as exc:
                problem, wait = f"{type(exc).__name__}: {exc}", None
            else:
                status = response.status_code
                if 200 <= status < 300:
                    self._delivered.inc()
                    self._errors.succeeded()
                    if self._retrying:
                        self._retrying = False
                        log.warning("%s sink: delivering again", s.name)
                    return
                problem = f"HTTP {status}: {response.text[:200]}"
                if status not in (408, 429) and status < 500:
                    self._drop("rejected", msg.grades, f"{problem} (not retried: fix the url, headers or receiver)")
                    return
                wait = retry_after(response.headers.get("retry-after"), self.wall())
            if attempt == s.max_retries:
                break
            if not self._retrying:
                self._retrying = True
                log.warning("%s sink: %s; retrying with backoff", s.name, problem)
            if not self._sleep(wait if wait is not None else min(s.max_backoff, s.backoff * 2**attempt)):
                self._drop("shutdown", msg.grades, "not delivered within shutdown_flush")
                return
        self._drop("gave_up", msg.grades, f"{problem} after {s.max_retries + 1} attempt(s)")

    def _headers(self, msg: Message) -> dict[str, str]:
        headers = {**self.settings.headers, "Content-Type": "application/json", "Idempotency-Key": msg.key}
        if self._secret:
            stamp = str(int(self.wall()))
            digest = hmac.new(self._secret, stamp.encode() + b"." + msg.body, hashlib.sha256).hexdigest()
            headers["X-Otelgrade-Timestamp"] = stamp
            headers["X-Otelgrade-Signature"] = f"sha256={digest}"
        return headers

    def _pace(self) -> bool:
        """Wait for the rate limit's next token; False when shutdown's flush time is over."""
        rate = self.settings.max_per_second
        now = self.clock()
        self._tokens = min(max(1.0, rate), self._tokens + (now - self._refilled) * rate)
        self._refilled = now
        if self._tokens < 1.0 and not self._sleep((1.0 - self._tokens) / rate):
            return False
        if self._past_flush():
            return False
        now = self.clock()
        self._tokens = min(max(1.0, rate), self._tokens + (now - self._refilled) * rate) - 1.0
        self._refilled = now
        return True

    def _sleep(self, seconds: float) -> bool:
        """Wait `seconds`, or less if shutdown's flush time ends first (then False)."""
        end = self.clock() + seconds
        with self._wake:
            while True:
                now = self.clock()
                if self._past_flush():
                    return False
                if now >= end:
                    return True
                self._wake.wait(min(end, self._flush_until) - now)

    def _past_flush(self) -> bool:
        return self._closing and self.clock() >= self._flush_until

    def _drop(self, reason: str, grades: int, why: object) -> None:
        self._dropped[reason].inc()
        self._errors.failed(grades, why)


def message(run: GradedRun, grades: Sequence[Grade], pages_url: str, chars: int) -> dict[str, Any]:
    """The JSON message of one run (schema 1): its matching grade records as they are (long texts cut), a summary
    of the run, and links."""
    t = run.trajectory
    lacks = set(t.lacks)
    run_url = f"{pages_url}/runs/{t.trace_id}" if pages_url else None
    named = pages_url and t.conversation_id is not None
    conversation_url = pages_url + conversation_path(t.conversation_id, t.conversation_scope) if named else None
    counts = Counter(g.outcome for g in run.grades)
    return {
        "schema": SCHEMA,
        "id": run.key,
        "text": summary_text(run, grades, conversation_url if isinstance(t, Conversation) else run_url),
        "run": {
            "level": "conversation" if isinstance(t, Conversation) else "run",
            "trace_id": t.trace_id,
            "span_id": t.span_id,
            "conversation_id": t.conversation_id,
            "conversation_scope": t.conversation_scope,
            "turns": t.turns if isinstance(t, Conversation) else None,
            "service_name": t.service_name,
            "agent_name": t.agent_name,
            "environment": t.environment,
            "source": t.source,
            "status": t.status,
            "error": _cut(t.error, chars),
            "input": None if "input" in lacks else _cut(t.input, chars),
            "output": None if "output" in lacks else _cut(t.output, chars),
            "start_time": t.start_time,
            "end_time": t.end_time,
            "duration_s": t.duration_s,
            "steps": t.steps,
            "llm_calls": None if "llm_calls" in lacks else len(t.llm_calls),
            "tool_calls": None if "tool_calls" in lacks else len(t.tool_calls),
            "tool_errors": None if "tool_calls" in lacks else sum(c.error for c in t.tool_calls),
            "lacks": sorted(lacks),
        },
        "grades": [bounded(g.to_dict(), chars) for g in grades],
        "counts": {outcome: counts[outcome] for outcome in OUTCOMES},
        "part": run.part,
        "waiting": list(run.waiting),
        "links": {"run": run_url, "conversation": conversation_url},
    }


def summary_text(run: GradedRun, grades: Sequence[Grade], run_url: str | None) -> str:
    """One line a chat channel shows (Slack and Mattermost incoming webhooks read `text`), linking to `run_url` (a
    conversation's page, for its grades)."""
    t = run.trajectory
    who = "/".join(part for part in (t.service_name, t.agent_name) if part) or "run"
    verdicts = "; ".join(f"{g.suite}/{g.grader} {g.outcome}: {_cut(_flat(g.rationale), 200)}" for g in grades)
    late = " (late judge verdict)" if run.part > 1 else ""
    what = f"trace {t.trace_id}"
    if isinstance(t, Conversation):  # a whole conversation's grades: name it, not its last turn's trace
        what = f"conversation {t.conversation_id} ({t.turns} turn(s), the last in trace {t.trace_id})"
    line = f"otelgrade: {who} {what}{late}: {verdicts}"
    return f"{line} <{run_url}>" if run_url else line


def bounded(value: Any, chars: int) -> Any:
    """`value` with every text cut to `chars` and every list to MAX_ITEMS (saying how much was left out)."""
    if isinstance(value, str):
        return _cut(value, chars)
    if isinstance(value, dict):
        return {key: bounded(item, chars) for key, item in value.items()}
    if isinstance(value, list | tuple):
        kept = [bounded(item, chars) for item in value[:MAX_ITEMS]]
        return [*kept, f"… {len(value) - MAX_ITEMS} more not sent"] if len(value) > MAX_ITEMS else kept
    return value


def _flat(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str | None, chars: int) -> str | None:
    if text is None or len(text) <= chars:
        return text
    return f"{text[:chars]}… [{len(text) - chars} more characters not sent]"


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds from a `Retry-After` header (seconds or an HTTP date), at most MAX_RETRY_AFTER."""
    if value is None:
        return None
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(value)))
    except ValueError:
        pass
    try:
        return min(MAX_RETRY_AFTER, max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - now))
    except (TypeError, ValueError):
        return None
