"""Re-grading on late spans: a suite with `regrade: true` grades a run again when spans reach its trace after it
was graded; the new grades are the next revision, the change is counted, and pass rates count the run once."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from tests.conftest import ServeProcess

LABELS = {"suite": "support", "grader": "safe", "environment": "unknown"}
CHANGED = {"suite": "support", "grader": "safe", "change": "pass_to_fail"}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}


def tool(name: str) -> dict[str, str]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.result": "done"}


def suites(regrade: bool) -> list[dict[str, object]]:
    graders = [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}]
    return [{"name": "support", "regrade": regrade, "graders": graders}]


def send_run_then_late_tool(server: ServeProcess) -> str:
    """A run that calls `lookup_order` (passes `safe`); once it has been graded, a late `delete_account` span of
    the same run arrives (an exporter that flushed late, a span ended after its parent)."""
    provider = TracerProvider(resource=Resource({"service.name": "support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.grpc_address, insecure=True)))
    tracer = provider.get_tracer("support.agent")
    with tracer.start_as_current_span("invoke_agent support", attributes=AGENT) as root:
        with tracer.start_as_current_span("execute_tool lookup_order", attributes=tool("lookup_order")):
            pass
        context = root.get_span_context()
    trace_id = f"{context.trace_id:032x}"
    server.wait_for_metric("otelgrade_runs_graded_total", {"suite": "support", "environment": "unknown"}, 1)
    parent = set_span_in_context(NonRecordingSpan(SpanContext(context.trace_id, context.span_id, False, TraceFlags(1))))
    tracer.start_span("execute_tool delete_account", context=parent, attributes=tool("delete_account")).end()
    provider.shutdown()
    return trace_id


def test_late_spans_grade_the_run_again_as_its_next_revision(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"suites": suites(regrade=True)})
    trace_id = send_run_then_late_tool(server)
    server.wait_for_metric("otelgrade_regrades_total", CHANGED, 1)
    counted = {o: server.metric("otelgrade_grades_total", {**LABELS, "outcome": o}) for o in ("pass", "fail")}
    runs = server.metric("otelgrade_runs_graded_total", {"suite": "support", "environment": "unknown"})
    late = server.metric("otelgrade_late_spans_total")
    turned = server.metric("otelgrade_regrade_failures_total", {"level": "run", "suite": "support", "grader": "safe"})
    server.stop()  # the sink's file is complete
    grades = server.grades()
    assert [(g["trace_id"], g["revision"], g["outcome"]) for g in grades] == [
        (trace_id, 1, "pass"),
        (trace_id, 2, "fail"),
    ]
    assert "delete_account" in grades[-1]["rationale"]
    # Pass rates count the run once, as first graded; the re-grade is counted apart.
    assert counted == {"pass": 1, "fail": 0} and runs == 1 and late == 0
    assert turned == 1  # the failure that came with the late spans counts toward the guardrail's alert


def test_without_regrade_late_spans_are_counted_late_and_the_grade_stands(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve({"suites": suites(regrade=False)})
    trace_id = send_run_then_late_tool(server)
    server.wait_for_metric("otelgrade_late_spans_total", None, 1)
    assert server.metric("otelgrade_regrades_total", CHANGED) == 0
    server.stop()  # the sink's file is complete
    assert [(g["trace_id"], g["revision"], g["outcome"]) for g in server.grades()] == [(trace_id, 1, "pass")]


def test_regrade_must_be_true_or_false() -> None:
    doc = {"suites": [{**suites(True)[0], "regrade": "yes"}]}
    with pytest.raises(ConfigError, match=r"suites\[0\]\.regrade.*true or false"):
        parse_config(doc)
