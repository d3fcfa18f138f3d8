"""Settings models for every step of the pipeline, and the duration syntax they share.

A leaf: it imports nothing of otelgrade, so any step can take its settings without loading the others.
Plugins (receivers, sinks, grader types) keep their own settings beside their code.
"""

from __future__ import annotations

import os
import re
import ssl
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ByteSize,
    ConfigDict,
    Field,
    RootModel,
    ValidationInfo,
    field_validator,
    model_validator,
)

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


BASE_DIR = "base_dir"  # the validation-context key of the folder relative file paths start from


def _readable_file(path: str, info: ValidationInfo) -> str:
    base_dir = (info.context or {}).get(BASE_DIR)
    resolved = Path(base_dir, path) if base_dir is not None else Path(path)
    try:
        with resolved.open("rb"):
            return str(resolved)
    except OSError as exc:
        raise ValueError(f"cannot read {str(resolved)!r}: {exc.strerror}") from None


ReadableFile = Annotated[str, AfterValidator(_readable_file)]
"""A path to a file that exists and can be read; a relative one starts from the config file's folder."""


class TlsSettings(Strict):
    """`tls:` of a listener, named as in the OpenTelemetry Collector: serve TLS with this certificate;
    with `client_ca_file`, also require client certificates signed by that CA (mutual TLS)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cert_file: ReadableFile
    key_file: ReadableFile
    client_ca_file: ReadableFile | None = None

    @model_validator(mode="after")
    def _loads(self) -> TlsSettings:
        try:
            self.server_context()
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(
                f"cannot load TLS files ({exc}): cert_file and key_file must be PEM files, the key matching the "
                "certificate, and client_ca_file a PEM bundle of CA certificates"
            ) from None
        return self

    def server_context(self) -> ssl.SSLContext:
        """The server side of TLS 1.2+ with this certificate (and client certificates required if a CA is set)."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_file, self.key_file)
        if self.client_ca_file is not None:
            context.load_verify_locations(self.client_ca_file)
            context.verify_mode = ssl.CERT_REQUIRED
        return context


class AuthSettings(Strict):
    """`auth:` of a listener: every request must carry `Authorization: Bearer <the file's content>`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bearer_token_file: ReadableFile

    @model_validator(mode="after")
    def _has_token(self) -> AuthSettings:
        if not self.token():
            raise ValueError(f"{self.bearer_token_file!r} is empty; write the bearer token in it")
        return self

    def token(self) -> str:
        """The token: the file's content without surrounding whitespace."""
        with open(self.bearer_token_file, encoding="utf-8", errors="replace") as file:
            return file.read().strip()


class ReceiverSettings(BaseModel):
    """`receivers:` — where OTLP arrives: `<receiver>: host:port` for each registered receiver (null turns it
    off; an absent one listens on its default address, on localhost), the limits they share, and the TLS
    and bearer-token authentication every receiver applies."""

    model_config = ConfigDict(extra="allow")

    max_request_bytes: int = Field(20 * 1024 * 1024, gt=0)  # as the OpenTelemetry Collector
    # How long a request body (a gRPC message) may take to arrive once its headers have: past it, HTTP 408 /
    # DEADLINE_EXCEEDED, so senders that trickle cannot hold connections and the receive allowance for long.
    body_read_timeout: Duration = Field(30.0, gt=0)
    # How long a connection may take to send a whole request's headers (of connecting, or of its last answer; for
    # gRPC, its handshake): past it, it is closed. At most `max_connections` are open on each port.
    header_timeout: Duration = Field(10.0, gt=0)
    max_connections: int = Field(400, gt=0)
    tls: TlsSettings | None = None
    auth: AuthSettings | None = None


class MetricsSettings(Strict):
    """`metrics:` — the Prometheus endpoint (also /healthz and /readyz), with optional TLS and bearer token."""

    endpoint: str | None = "localhost:9464"
    label_limit: int = Field(200, gt=0)  # series of otelgrade_runs_total{service,agent}, in all; then "other"
    header_timeout: Duration = Field(10.0, gt=0)  # as receivers.header_timeout, on this port
    max_connections: int = Field(100, gt=0)
    tls: TlsSettings | None = None
    auth: AuthSettings | None = None


class AssemblySettings(Strict):
    """`assembly:` — when a trace's run is complete, and how much may be held."""

    settle: Duration = 2.0
    idle_timeout: Duration = 30.0
    max_trace_duration: Duration = 600.0
    max_traces: int = Field(50_000, gt=0)
    max_spans_per_trace: int = Field(10_000, gt=0)
    decision_cache_size: int = Field(100_000, gt=0)
    regrade_traces: int = Field(10_000, ge=0)  # graded traces kept for late spans, when a suite sets `regrade`


class SpanMapping(Strict):
    """One `rebuild.mappings` entry: spans of an instrumentation otelgrade does not know, read through the
    attribute names it uses. `match` selects the spans (`span.name` or an attribute, a value or a `^regex`);
    the other keys name the attributes holding each fact of the `role`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: dict[str, str | int | bool] = Field(min_length=1)
    role: Literal["agent", "llm", "tool"]
    name: str | None = None  # agent: its name; tool: the tool's name; llm: the model
    input: str | None = None  # agent: the request; llm: the prompt (text or chat-messages JSON)
    output: str | None = None  # agent: the answer; llm: the completion (text or chat-messages JSON)
    arguments: str | None = None  # tool
    result: str | None = None  # tool
    call_id: str | None = None  # tool

    @model_validator(mode="after")
    def _keys_fit_the_role(self) -> SpanMapping:
        own = {"agent": {"name", "input", "output"}, "llm": {"name", "input", "output"}}.get(
            self.role, {"name", "arguments", "result", "call_id"}
        )
        given = {k for k in ("name", "input", "output", "arguments", "result", "call_id") if getattr(self, k)}
        if given - own:
            raise ValueError(
                f"`{self.role}` mappings read {', '.join(sorted(own))}, not {', '.join(sorted(given - own))}"
            )
        return self


class RebuildSettings(Strict):
    """`rebuild:` — how spans become runs, beyond the conventions otelgrade reads by itself."""

    mappings: list[SpanMapping] = Field(default_factory=list)
    # Take a run's reference answer from its span attribute `otelgrade.ground_truth`. Off by default: whoever sends
    # spans would choose what their run is graded against (a grader's own `ground_truth` and trajectory JSON given
    # to `otelgrade grade` are always read).
    ground_truth_from_spans: bool = False


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


_DEFAULT_RATE = "default"


class SampleRates(RootModel[dict[str, float]]):
    """A judge's `sample`: the share of runs it judges (0 to 1), for every run or per environment (the run's
    `deployment.environment.name`; `unknown` for a run without one) with `default` for the environments not
    named: `0.05`, or `{eval: 1.0, production: 0.05, default: 0.2}`."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _read(cls, value: Any) -> Any:
        if isinstance(value, SampleRates):
            return value.root
        if _is_number(value):
            return {_DEFAULT_RATE: _share(value, repr(value))}
        if not isinstance(value, dict) or not value:
            raise ValueError(
                "`sample` is a share of runs from 0 to 1 (0.05 judges 5%), or one per environment such as "
                "{production: 0.05, eval: 1.0, default: 0.2}"
            )
        for environment in value:
            if not isinstance(environment, str) or not environment:
                raise ValueError(f"environment {environment!r} is not a name; write it as a string, e.g. 'production'")
        return {environment: _share(rate, f"{environment}: {rate!r}") for environment, rate in value.items()}

    def rate(self, environment: str) -> float | None:
        """The share for runs of `environment`: its own entry, else `default`; None when neither is given."""
        return self.root.get(environment, self.root.get(_DEFAULT_RATE))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _share(rate: Any, written: str) -> float:
    if not _is_number(rate) or not 0.0 <= rate <= 1.0:
        raise ValueError(f"`{written}` is not a share of runs: write a number from 0 to 1 (0.05 judges 5%)")
    return float(rate)


class JudgeControls(Strict):
    """One judge grader's own limits and endpoint; None means "as the global `judge:` block says"."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sample: SampleRates | None = None
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
    sample: SampleRates = Field(default_factory=lambda: SampleRates(1.0))  # under a suite's and a grader's own
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


TRACE_URL_PLACEHOLDERS = ("{trace_id}", "{span_id}")


class UiSettings(Strict):
    """`ui:` — the grades page on the metrics endpoint, and the log lines about failing runs."""

    keep: int = Field(1000, gt=0)  # runs held for the page; failing runs are kept in preference
    trace_url: str | None = None  # e.g. "http://jaeger:16686/trace/{trace_id}": each run links to its trace
    # The grades page's address as people reach it (behind a proxy, a load balancer, a DNS name): alerts link to
    # `<external_url>?suite=..&grader=..&outcome=fail`. Unset: http(s)://<this host's name>:<metrics port>/.
    external_url: str | None = None
    log_failures: int = Field(10, ge=0)  # failing-run log lines per minute at most (0: none)
    log_summary: Duration = Field(60.0, ge=0)  # how often a summary line is logged (0: never)

    @field_validator("trace_url")
    @classmethod
    def _trace_url_placeholders(cls, url: str | None) -> str | None:
        if url is None:
            return url
        if not re.match(r"https?://", url, re.IGNORECASE):
            raise ValueError(
                f"a trace_url must start with http:// or https:// (it becomes a link on the grades page), not {url!r}"
            )
        unknown = sorted(set(re.findall(r"\{\w+\}", url)) - set(TRACE_URL_PLACEHOLDERS))
        if unknown:
            raise ValueError(
                f"unknown placeholder {unknown[0]}; a trace_url may use {' and '.join(TRACE_URL_PLACEHOLDERS)}"
            )
        if "{trace_id}" not in url:
            raise ValueError(
                "a trace_url needs {trace_id} where the trace id goes, e.g. http://jaeger:16686/trace/{trace_id}"
            )
        return url

    @field_validator("external_url")
    @classmethod
    def _external_url(cls, url: str | None) -> str | None:
        if url is None:
            return url
        if not re.match(r"https?://[^/?#]+", url, re.IGNORECASE) or re.search(r"[?#]", url):
            raise ValueError(
                "external_url is the grades page's address as people open it, such as "
                f"https://otelgrade.example.com/ (http or https, no query), not {url!r}"
            )
        return url if url.endswith("/") else url + "/"

    def trace_link(self, trace_id: str, span_id: str = "") -> str | None:
        """The user's tracing backend's page for this trace, when `trace_url` is set."""
        if self.trace_url is None:
            return None
        return self.trace_url.replace("{trace_id}", trace_id).replace("{span_id}", span_id)


Bytes = Annotated[ByteSize, Field(gt=0)]
"""A size in bytes, written as a number or as `512MiB`, `1GiB`, `100MB`."""


class LimitsSettings(Strict):
    """`limits:` — memory, counted in bytes of received OTLP (each held span and log record counts its share of its
    request's body). Past `max_bytes_held` (spans waiting for their run to complete plus completed runs waiting to
    be graded) the receivers answer 503 (Retry-After) / UNAVAILABLE; `max_bytes_receiving` bounds the request
    bodies being read and decoded at once. The process's memory is a small multiple of these (Python objects)."""

    max_bytes_held: Bytes = ByteSize(1024**3)
    max_bytes_receiving: Bytes = ByteSize(256 * 1024**2)


class DurabilitySettings(Strict):
    """`durability:` — opt-in: with `spool_dir`, every accepted request is written to an append-only spool before
    it is acknowledged, replayed after a crash and trimmed once its runs are graded.

    `fsync`: `batch` (default) syncs each request to disk before its answer, requests arriving together sharing
    one sync; `always` also syncs every graded-run mark (no run graded twice even after a power cut); `never`
    leaves syncing to the OS (a crash of otelgrade loses nothing, a crash of the machine may)."""

    spool_dir: str | None = None  # relative to the config file's folder
    fsync: Literal["batch", "always", "never"] = "batch"
    segment_bytes: Bytes = ByteSize(64 * 1024**2)  # a spool file is trimmed whole, once all its runs are graded


class ServerSettings(Strict):
    """`server:` — the process's lifecycle."""

    # From SIGTERM: runs already complete are always code-graded; judge answers still outstanding after this
    # are recorded as `error` (reason `shutdown`).
    shutdown_timeout: Duration = Field(30.0, ge=0)
    # Grading processes, each owning the traces whose id hashes to it; the receiving process routes spans to
    # them. 1 (the default): a single process. `auto`: one per core available. `OTELGRADE_WORKERS` overrides.
    workers: int | Literal["auto"] = 1
    # With workers: one that has not answered the receiving process's heartbeat (or a request) within
    # `worker_timeout` is late: /readyz says 503 and the requests for its traces get 503 / UNAVAILABLE; one still
    # silent after `worker_restart_after` is killed and started again (its spool replays what it held).
    worker_timeout: Duration = Field(5.0, gt=0)
    worker_restart_after: Duration = Field(30.0, gt=0)

    @field_validator("workers")
    @classmethod
    def _worker_range(cls, workers: int | str) -> int | str:
        if isinstance(workers, int) and not 1 <= workers <= 256:
            raise ValueError(f"workers is a number from 1 to 256, or auto (one per core), not {workers}")
        return workers

    def worker_count(self) -> int:
        """How many grading workers to run: `OTELGRADE_WORKERS`, else `workers` (`auto`: the cores available)."""
        given = os.environ.get(WORKERS_ENV, "").strip()
        if given and given != "auto" and (not given.isdigit() or not 1 <= int(given) <= 256):
            raise ValueError(f"{WORKERS_ENV}={given!r}: write a whole number of workers from 1 to 256, or auto")
        workers = given or self.workers
        if workers == "auto":
            return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return int(workers)


class ConversationSettings(Strict):
    """`conversations:` — runs that share a conversation id form a conversation, graded by `level: conversation`
    suites once it is complete: `settle` after its last run, or at once on a run marked
    `otelgrade.conversation.end=true`. A run arriving later re-opens it (within `keep_completed`), and it is graded
    again. Held conversations keep their runs' trajectories (not spans), within `max_conversations` and
    `max_bytes`; past them the oldest open conversation is graded as it stands (counted as evicted)."""

    settle: Duration = Field(900.0, gt=0)
    id_attributes: list[str] = Field(default_factory=list)  # the application's own conversation id attributes
    # Whose id it is: runs whose ids are equal are one conversation only when this attribute (on the resource or
    # where the id is found) has the same value too. Empty: ids are shared by every application.
    scope_attribute: str = "service.name"
    keep_completed: Duration = Field(3600.0, ge=0)  # how long a completed conversation can be re-opened
    max_conversations: int = Field(100_000, gt=0)
    max_bytes: Bytes = ByteSize(640 * 1024**2)
    # One conversation at most (and a quarter of `max_bytes`): past either it is graded as it stands (`capped`) and
    # its later turns start anew.
    max_conversation_turns: int = Field(1000, gt=0)
    max_conversation_bytes: Bytes = ByteSize(32 * 1024**2)  # its turns' trajectory JSON, uncompressed
    # With replicas: the conversation router's OTLP/HTTP address (`http://conversation-router:4318`): each turn is
    # sent there, and the router sends it to the replica that owns its conversation (collector_config/).
    route_turns: str | None = None
    # With `route_turns`: a file holding a secret every replica shares. Turn records are signed with it, and a replica
    # holds only the turn records it signs (a replica without `route_turns` holds none).
    turn_token_file: ReadableFile | None = None

    @model_validator(mode="after")
    def _routing_is_signed(self) -> ConversationSettings:
        if self.route_turns is not None and self.turn_token_file is None:
            raise ValueError(
                "route_turns needs turn_token_file: a file holding a secret all replicas share, which signs the turn "
                "records they send each other (records it does not sign are refused)"
            )
        if self.turn_token_file is not None and not self.turn_secret():
            raise ValueError(f"{self.turn_token_file!r} is empty; write the replicas' shared secret in it")
        return self

    def turn_secret(self) -> bytes | None:
        """The secret that signs turn records (the file's content without surrounding whitespace), None without one."""
        if self.turn_token_file is None:
            return None
        with open(self.turn_token_file, "rb") as file:
            return file.read().strip()

    @field_validator("route_turns")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"route_turns is the router's OTLP/HTTP address, such as http://router:4318, not {url!r}")
        return url


WORKERS_ENV = "OTELGRADE_WORKERS"
