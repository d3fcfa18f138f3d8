"""OTLP sink: sends grades back to the tracing backend as GenAI evaluation results on the graded trace.

Each graded run becomes one short span, child of the run's root span (same trace id), carrying one
`gen_ai.evaluation.result` event per grade, so Jaeger, Tempo or Phoenix show the grades beside the
run; grades of a single call (`scope: tool_call` / `llm_call`) go on a span under that call's span, and a whole
conversation's grades (`otelgrade.level: conversation`) under the span of its last run.
Spans leave through the OpenTelemetry SDK's batch processor and OTLP exporter (gRPC for `host:port`,
HTTP for `http(s)://` endpoints), on a private tracer provider; `write` never blocks on the network.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags, set_span_in_context

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.export.sinks import Sink, SinkSettings, sink_type
from otelgrade.export.sinks._burst import ErrorBurst

# OpenTelemetry GenAI semantic conventions (development status): evaluation results.
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
ERROR_TYPE = "error.type"

SPAN_NAME = "otelgrade.evaluate"
MAX_EXPLANATION = 4096  # characters; a judge's rationale can be long, a trace UI is not the place for all of it


def evaluation_event(grade: Grade) -> dict[str, Any]:
    """One grade -> the attributes of its `gen_ai.evaluation.result` event."""
    attrs: dict[str, Any] = {
        EVALUATION_NAME: grade.grader,
        SCORE_LABEL: grade.outcome,
        "otelgrade.suite": grade.suite,
        "otelgrade.passed": grade.passed,
        "otelgrade.sample.rate": grade.sample_rate,
        "otelgrade.sampled": grade.sampled,
    }
    if grade.score is not None:
        attrs[SCORE_VALUE] = float(grade.score)
    if grade.rationale:
        attrs[EXPLANATION] = grade.rationale[:MAX_EXPLANATION]
    if grade.grader_type:
        attrs["otelgrade.grader.type"] = grade.grader_type
    if grade.scope != "run":
        attrs["otelgrade.scope"] = grade.scope
    if grade.call_span_id:
        attrs["otelgrade.call.span_id"] = grade.call_span_id
    if grade.version:
        attrs["otelgrade.grader.version"] = grade.version
    if grade.conversation_id is not None:  # also on a run's grades: which conversation the run is a turn of
        attrs["gen_ai.conversation.id"] = grade.conversation_id
        if grade.conversation_scope is not None:
            attrs["otelgrade.conversation.scope"] = grade.conversation_scope
    if grade.level != "run":  # a whole conversation's grade, on its last run's span
        attrs["otelgrade.level"] = grade.level
    if grade.revision > 1:  # supersedes the same grade's lower revisions (the run was re-graded on late spans)
        attrs["otelgrade.revision"] = grade.revision
    if grade.outcome == "error":
        attrs[ERROR_TYPE] = str(grade.metadata.get("error_type") or "otelgrade.grader_error")
    response_id = grade.metadata.get("response_id")
    if isinstance(response_id, str) and response_id:
        attrs[RESPONSE_ID] = response_id
    return attrs


def graded_run_context(trace_id: str, span_id: str) -> SpanContext | None:
    """The graded run's root span as a remote parent, or None if the ids are not valid hex ids."""
    try:
        tid, sid = int(trace_id, 16), int(span_id, 16)
    except ValueError:
        return None
    if not tid or not sid or len(trace_id) != 32 or len(span_id) != 16:
        return None
    return SpanContext(tid, sid, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))


def make_exporter(endpoint: str, insecure: bool = True) -> SpanExporter:
    """`host:port` -> OTLP/gRPC exporter; `http(s)://host:port[/v1/traces]` -> OTLP/HTTP exporter."""
    if endpoint.startswith(("http://", "https://")):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

        if urlsplit(endpoint).path in ("", "/"):
            endpoint = endpoint.rstrip("/") + "/v1/traces"
        return HttpExporter(endpoint=endpoint)
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

    return GrpcExporter(endpoint=endpoint, insecure=insecure)


class _CountingExporter(SpanExporter):
    """Passes spans to the real exporter and counts the grades in batches it failed to deliver."""

    def __init__(self, inner: SpanExporter, errors: ErrorBurst) -> None:
        self.inner, self.errors = inner, errors

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        reason: object = "export failed (see the exporter's log)"
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter bug must not kill the batch thread
            result, reason = SpanExportResult.FAILURE, exc
        if result is SpanExportResult.SUCCESS:
            self.errors.succeeded()
        else:
            self.errors.failed(sum(len(s.events) for s in spans), reason)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


@sink_type("otlp")
class OtlpSinkSettings(SinkSettings):
    """`{type: otlp, endpoint: localhost:4317}` (gRPC) or `endpoint: http://host:4318/v1/traces` (HTTP)."""

    type: Literal["otlp"]
    endpoint: str
    insecure: bool = True

    def build(self, metrics: Metrics) -> Sink:
        return OtlpSink(self.endpoint, metrics, insecure=self.insecure)


class OtlpSink:
    """Batches evaluation-result spans to an OTLP endpoint; drops (and counts) when the queue is full."""

    def __init__(
        self,
        endpoint: str,
        metrics: Metrics,
        *,
        insecure: bool = True,
        exporter: SpanExporter | None = None,
        schedule_delay_millis: float = 1000,
        max_queue_size: int = 8192,
    ) -> None:
        self.endpoint = endpoint
        self._errors = ErrorBurst("otlp", metrics)
        inner = exporter if exporter is not None else make_exporter(endpoint, insecure)
        self._provider = TracerProvider(resource=Resource.create({"service.name": "otelgrade"}), sampler=ALWAYS_ON)
        self._provider.add_span_processor(
            BatchSpanProcessor(
                _CountingExporter(inner, self._errors),
                max_queue_size=max_queue_size,
                schedule_delay_millis=schedule_delay_millis,
            )
        )
        self._tracer = self._provider.get_tracer("otelgrade")
        self._closed = False
        self._lock = threading.Lock()

    def write(self, grades: Sequence[Grade]) -> None:
        if self._closed:
            self._errors.failed(len(grades), "sink is closed")
            return
        runs: dict[tuple[str, str], list[Grade]] = {}  # by the graded span: the run's root, or the graded call's
        for grade in grades:
            runs.setdefault((grade.trace_id, grade.call_span_id or grade.span_id), []).append(grade)
        for (trace_id, span_id), run_grades in runs.items():
            try:
                self._emit(trace_id, span_id, run_grades)
            except Exception as exc:  # never into the grading path
                self._errors.failed(len(run_grades), exc)

    def _emit(self, trace_id: str, span_id: str, grades: list[Grade]) -> None:
        parent = graded_run_context(trace_id, span_id)
        if parent is None:
            self._errors.failed(len(grades), f"not a valid trace/span id: {trace_id!r}/{span_id!r}")
            return
        first = grades[0]
        times = [int(g.time_unix * 1e9) for g in grades if g.time_unix]
        start = min(times) if times else None
        attrs: dict[str, Any] = {
            "otelgrade.suites": sorted({g.suite for g in grades}),
            "otelgrade.grades.failed": sum(g.outcome == "fail" for g in grades),
        }
        if first.agent_name:
            attrs["gen_ai.agent.name"] = first.agent_name
        if first.service_name:
            attrs["otelgrade.graded.service.name"] = first.service_name
        if first.environment:
            attrs["otelgrade.graded.deployment.environment.name"] = first.environment
        span = self._tracer.start_span(
            SPAN_NAME,
            context=set_span_in_context(NonRecordingSpan(parent)),
            kind=SpanKind.INTERNAL,
            attributes=attrs,
            start_time=start,
        )
        for grade in grades:
            stamp = int(grade.time_unix * 1e9) if grade.time_unix else None
            span.add_event(EVALUATION_EVENT, evaluation_event(grade), timestamp=stamp)
        span.end(end_time=max(times) if times else None)

    def flush(self) -> None:
        try:
            self._provider.force_flush(timeout_millis=5000)
        except Exception as exc:
            self._errors.failed(0, exc)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._provider.shutdown()
        except Exception as exc:
            self._errors.failed(0, exc)
