"""Every Prometheus metric otelgrade exports (names and labels are an operator-facing contract).

Metrics live on a `Metrics` object with its own registry, so a test or an embedding program
can run several pipelines in one process.
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# Seconds; grading delay is settle-dominated (default settle 2 s), judge latency is model-bound.
DELAY_BUCKETS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 10.0, 30.0, 60.0, 300.0)
JUDGE_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)

OTHER = "other"
UNKNOWN = "unknown"  # the label value of a traffic-derived label the run does not carry
ENVIRONMENT_LIMIT = 20  # distinct `environment` label values; later ones are counted as `other`
SCOPE_LIMIT = 50  # distinct instrumentation scopes counted as not understood


class SeriesCap:
    """Admits at most `limit` distinct combinations of traffic-derived label values (one series each); later
    combinations are folded into `other` for every label, so the metric has at most `limit` + 1 series."""

    def __init__(self, names: tuple[str, ...], limit: int, overflow: Counter) -> None:
        self.names, self.limit, self._overflow = names, limit, overflow
        self._seen: set[tuple[str, ...]] = set()
        self._lock = threading.Lock()

    def __call__(self, *values: str | None) -> tuple[str, ...]:
        series = tuple([value or UNKNOWN for value in values])
        if series in self._seen:
            return series
        with self._lock:
            if len(self._seen) < self.limit:
                self._seen.add(series)
                return series
        for name in self.names:
            self._overflow.labels(name).inc()
        return (OTHER,) * len(series)


class Metrics:
    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        label_limit: int = 200,
        environment_limit: int = ENVIRONMENT_LIMIT,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        # --- receive and assemble
        self.spans_received = Counter("otelgrade_spans_received", "Spans accepted", ["protocol"], registry=r)
        self.spans_rejected = Counter(
            "otelgrade_spans_rejected", "Spans refused or cut, by reason", ["reason"], registry=r
        )
        self.log_records_received = Counter(
            "otelgrade_log_records_received", "OTLP log records received", ["protocol"], registry=r
        )
        self.log_records_dropped = Counter(
            "otelgrade_log_records_dropped",
            "Log records not kept (not a GenAI event, no span, ...)",
            ["reason"],
            registry=r,
        )
        self.requests = Counter(
            "otelgrade_requests", "OTLP export requests answered", ["protocol", "signal", "result"], registry=r
        )
        self.traces_in_flight = Gauge("otelgrade_traces_in_flight", "Traces held, waiting to complete", registry=r)
        self.spans_in_flight = Gauge("otelgrade_spans_in_flight", "Spans held, waiting for their trace", registry=r)
        self.traces_completed = Counter(
            "otelgrade_traces_completed", "Traces closed, by why they closed", ["reason"], registry=r
        )
        self.late_spans = Counter("otelgrade_late_spans", "Spans that arrived after their trace was graded", registry=r)
        # --- memory and durability (limits: and durability:)
        self.bytes_held = Gauge(
            "otelgrade_bytes_held",
            "Bytes received for the spans and log records held: waiting for their run, or to be graded",
            registry=r,
        )
        self.bytes_receiving = Gauge(
            "otelgrade_bytes_receiving", "Bytes of request bodies being read and decoded", registry=r
        )
        self.grading_backlog = Gauge(
            "otelgrade_grading_backlog", "Completed traces waiting for the grading thread", registry=r
        )
        self.spool_bytes = Gauge("otelgrade_spool_bytes", "Bytes in the durability spool's files", registry=r)
        self.spool_damage = Counter(
            "otelgrade_spool_damage",
            "Damage the spool read past: a damaged stretch of records (corrupt), a write cut short (torn), a segment "
            "of an unknown format version left as it is (unknown_version), an unreadable graded mark (graded_mark)",
            ["kind"],
            registry=r,
        )
        # --- grade
        self.runs = Counter(
            "otelgrade_runs", "Agent runs rebuilt, by service and agent", ["service", "agent"], registry=r
        )
        self.runs_unmatched = Counter(
            "otelgrade_runs_unmatched",
            "Request runs no suite's match accepted (not graded), by service and agent",
            ["service", "agent"],
            registry=r,
        )
        self.traces_without_run = Counter(
            "otelgrade_traces_without_run",
            "Completed traces with no recognizable agent or model call (nothing to grade)",
            registry=r,
        )
        self.spans_not_understood = Counter(
            "otelgrade_spans_not_understood",
            "Spans with an AI instrumentation's marks that no dialect read, per instrumentation scope "
            "(their runs' graders that need what they hold answer skipped)",
            ["scope"],
            registry=r,
        )
        self.tool_calls_one_witness = Counter(
            "otelgrade_tool_calls_one_witness",
            "Tool calls of runs that show the model's requests seen by one witness only: asked for, with neither "
            "an execution nor a result (`request`), or executed with no request for it (`execution`)",
            ["witness"],
            registry=r,
        )
        self.runs_inconsistent = Counter(
            "otelgrade_runs_inconsistent",
            "Runs whose witnesses disagree with no rule to reconcile them (calls asked for vs executed, a finish "
            "reason announcing tool calls none shows, a placeholder answer, ...), per reason: each lacks what is "
            "uncertain, so its graders that need it answer skipped",
            ["reason"],
            registry=r,
        )
        # `environment`: the run's deployment.environment.name (else deployment.environment), capped.
        self.runs_graded = Counter(
            "otelgrade_runs_graded", "Runs graded, per suite", ["suite", "environment"], registry=r
        )
        self.runs_eligible = Counter(
            "otelgrade_runs_eligible",
            "Runs routed to a sampled (judge) grader, judged or not: its coverage is graded / eligible",
            ["suite", "grader", "environment"],
            registry=r,
        )
        self.grades, self.grade_score = _grade_families("otelgrade_grade", "", r)
        # Conversations (`level: conversation` suites): families of their own, so run series stay as they were.
        self.conversation_grades, self.conversation_grade_score = _grade_families(
            "otelgrade_conversation_grade", " to whole conversations", r
        )
        self.conversations_graded = Counter(
            "otelgrade_conversations_graded", "Conversations graded by a suite", ["suite", "environment"], registry=r
        )
        self.conversations_completed = Counter(
            "otelgrade_conversations_completed",
            "Conversations completed (settled, ended by a marker, evicted for room, at shutdown, capped: past a "
            "conversation's own turn or byte cap)",
            ["reason"],
            registry=r,
        )
        self.conversations_reopened = Counter(
            "otelgrade_conversations_reopened", "Runs that re-opened a completed conversation", registry=r
        )
        self.conversations_open = Gauge("otelgrade_conversations_open", "Conversations held open", registry=r)
        self.conversation_bytes = Gauge(
            "otelgrade_conversation_bytes_held", "Bytes of run trajectories held for conversations", registry=r
        )
        self.turn_records = Counter(
            "otelgrade_turn_records",
            "Conversation turn records between replicas: sent to the conversation router, received, dropped (the "
            "send queue full), failed (the router did not take them)",
            ["result"],
            registry=r,
        )
        self.runs_without_conversation = Counter(
            "otelgrade_runs_without_conversation",
            "Request runs no conversation suite could take: their spans name no conversation id",
            registry=r,
        )
        self.grading_delay = Histogram(
            "otelgrade_grading_delay_seconds",
            "From a run's last span received to its code graders done",
            buckets=DELAY_BUCKETS,
            registry=r,
        )
        self.regrades = Counter(
            "otelgrade_regrades",
            "Grades given again (late spans reached a graded run, a run re-opened a graded conversation), by change: "
            "same, pass_to_fail, fail_to_pass, "
            "other (to or from error/skipped)",
            ["suite", "grader", "change"],
            registry=r,
        )
        self.failures_on_regrade = Counter(
            "otelgrade_regrade_failures",
            "Grades that turned to fail when given again (a resumed conversation, a run re-graded on late spans), by "
            "level (run, conversation): the grade families count each run and conversation once, as first graded, so "
            "the guardrail alerts add these",
            ["level", "suite", "grader", "environment"],
            registry=r,
        )
        self.grader_versions = Gauge(
            "otelgrade_grader_version_info",
            "1 for each configured grader, labelled with its version (a hash of its effective config): a new value "
            "marks when the grader changed",
            ["suite", "grader", "version"],
            registry=r,
        )
        self.archive_traces = Counter(
            "otelgrade_archive_traces",
            "The traffic archive: traces written, failing runs missed (their verdict came after their trace left the "
            "hold), traces not written (write_error), files deleted to stay within max_bytes and max_age",
            ["result"],
            registry=r,
        )
        self.archive_bytes = Gauge("otelgrade_archive_bytes", "Bytes in the traffic archive's files", registry=r)
        self.grader_alert_policy = Gauge(
            "otelgrade_grader_alert_policy",
            "1 per configured grader, labelled with how its failures page: any (every failure), objective (pass-rate "
            "burn rates) or none; the shipped alert rules join on it",
            ["suite", "grader", "policy"],
            registry=r,
        )
        self.grades_page = Gauge(
            "otelgrade_grades_page_info",
            "1, labelled with the grades page's address as people reach it (`ui.external_url`): alerts link to it",
            ["url"],
            registry=r,
        )
        self.grader_errors = Counter(
            "otelgrade_grader_exceptions", "Graders that raised (graded as error)", ["suite", "grader"], registry=r
        )
        self.label_overflow = Counter(
            "otelgrade_label_overflow", "Label values folded into 'other'", ["label"], registry=r
        )
        self.config_reloads = Counter("otelgrade_config_reloads", "Config reloads", ["result"], registry=r)
        # --- judges
        self.judge_requests = Counter(
            "otelgrade_judge_requests", "Judge model requests", ["model", "outcome"], registry=r
        )
        self.judge_latency = Histogram(
            "otelgrade_judge_latency_seconds", "Judge request latency", ["model"], buckets=JUDGE_BUCKETS, registry=r
        )
        self.judge_tokens = Counter("otelgrade_judge_tokens", "Judge tokens used", ["model", "kind"], registry=r)
        self.judge_cost = Counter(
            "otelgrade_judge_cost_usd", "Judge spend by the configured price table", ["model"], registry=r
        )
        self.judge_skipped = Counter(
            "otelgrade_judge_skipped_runs", "Runs a judge did not grade, by reason", ["grader", "reason"], registry=r
        )
        self.judge_queue = Gauge("otelgrade_judge_queue_length", "Runs waiting for a judge", registry=r)
        self.judge_paused = Gauge(
            "otelgrade_judge_paused", "1 while judging is paused (budget spent)", ["grader"], registry=r
        )
        # --- sinks
        self.sink_errors = Counter("otelgrade_sink_errors", "Grades a sink failed to write", ["sink"], registry=r)
        self.sink_delivered = Counter(
            "otelgrade_sink_delivered", "Messages (one per graded run) a sink delivered", ["sink"], registry=r
        )
        self.sink_dropped = Counter(
            "otelgrade_sink_dropped",
            "Messages (one per graded run) a sink gave up on, by reason: queue_full, rejected (a 4xx answer), "
            "gave_up (retries spent), shutdown (not delivered within the shutdown flush), unencodable",
            ["sink", "reason"],
            registry=r,
        )

        self.run_labels = SeriesCap(("service", "agent"), label_limit, self.label_overflow)
        self.environment_label = SeriesCap(("environment",), environment_limit, self.label_overflow)
        self.scope_label = SeriesCap(("scope",), SCOPE_LIMIT, self.label_overflow)

    def environment(self, environment: str | None) -> str:
        """The `environment` label value of a run's environment: `unknown` when unset, `other` past the cap."""
        return self.environment_label(environment)[0]


def _grade_families(prefix: str, about: str, r: CollectorRegistry) -> tuple[Counter, Histogram]:
    """`<prefix>s_total{suite,grader,outcome,environment}` and the `<prefix>_score` histogram."""
    grades = Counter(f"{prefix}s", f"Grades given{about}", ["suite", "grader", "outcome", "environment"], registry=r)
    scores = Histogram(
        f"{prefix}_score",
        f"Scores given{about} (0.0-1.0)",
        ["suite", "grader", "environment"],
        buckets=SCORE_BUCKETS,
        registry=r,
    )
    return grades, scores
