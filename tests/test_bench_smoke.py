"""Keeps the benchmark from rotting: its traces are what it claims, and a tiny run goes end to end."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from bench import loadgen, run
from otelgrade.decode import decode_traces


def test_loadgen_sends_agent_runs_children_first_root_last() -> None:
    bodies = loadgen.encode_requests(traces=7, spans_per_trace=6, per_request=3)
    assert len(bodies) == 3  # 3 + 3 + 1 runs
    by_trace: dict[str, list] = defaultdict(list)
    for body in bodies:
        for span in decode_traces(body).spans:
            by_trace[span.trace_id].append(span)
    assert len(by_trace) == 7
    for spans in by_trace.values():
        root = spans[-1]
        assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert root.parent_id is None
        children = spans[:-1]
        assert all(s.parent_id == root.span_id for s in children)
        ops = [s.attributes["gen_ai.operation.name"] for s in children]
        assert ops == ["chat", "execute_tool", "chat", "execute_tool", "chat"]
        tool_spans = [s for s in children if s.attributes["gen_ai.operation.name"] == "execute_tool"]
        chat_spans = [s for s in children if s.attributes["gen_ai.operation.name"] == "chat"]
        # each tool span answers the tool call the chat before it made
        for chat, tool in zip(chat_spans, tool_spans, strict=False):
            (call,) = json.loads(chat.attributes["gen_ai.output.messages"])[0]["parts"]
            assert call["id"] == tool.attributes["gen_ai.tool.call.id"]
            assert call["name"] == tool.attributes["gen_ai.tool.name"]
        final = json.loads(chat_spans[-1].attributes["gen_ai.output.messages"])[0]["parts"][0]
        assert final["type"] == "text"
        assert root.resource["service.name"] == "booking-agent"


def test_decode_floor_reads_every_span() -> None:
    bodies = loadgen.encode_requests(traces=20, spans_per_trace=10, per_request=8)
    assert loadgen.decode_walk(bodies) == 200
    assert loadgen.decode_floor(bodies, repeat=1) > 0


def test_metric_totals_sum_over_labels() -> None:
    samples = {
        'otelgrade_runs_graded_total{suite="a"}': 3.0,
        'otelgrade_runs_graded_total{suite="b"}': 4.0,
        "otelgrade_runs_graded_created": 1.0,
        "otelgrade_spans_in_flight": 9.0,
    }
    assert loadgen.total(samples, "otelgrade_runs_graded_total") == 7.0
    assert loadgen.total(samples, "otelgrade_spans_in_flight") == 9.0


def test_a_tiny_benchmark_runs_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--traces", "40", "--spans-per-trace", "5", "--batch-traces", "10", "--concurrency", "2", "--repeat", "2"]
    assert run.main([*argv, "--judge-delay", "0.2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    runs = {(r["scenario"], r["protocol"]): r for r in doc["runs"]}
    assert set(runs) == {("deterministic", "grpc"), ("deterministic", "http"), ("slow judge (0.2 s)", "grpc")}
    for r in runs.values():
        assert r["spans"] == 200
        assert r["end_to_end_s"] is not None and r["end_to_end_s"] >= r["send_s"]
        assert r["peak_rss_mb"] > 0
    assert doc["memory"]["spans_held"] == 200
    assert doc["judge_requests"] > 0  # the judge scenario really sent runs to the judge


def test_histogram_quantile_uses_only_observations_between_scrapes() -> None:
    name = "otelgrade_grading_delay_seconds_bucket"
    before = {f'{name}{{le="0.25"}}': 10.0, f'{name}{{le="0.5"}}': 10.0, f'{name}{{le="+Inf"}}': 10.0}
    after = {f'{name}{{le="0.25"}}': 10.0, f'{name}{{le="0.5"}}': 108.0, f'{name}{{le="+Inf"}}': 110.0}
    # 100 new observations: 98 in (0.25, 0.5], 2 above 0.5 -> the p99 lies in the +Inf bucket, p95 in 0.5
    assert loadgen.histogram_quantile(before, after, "otelgrade_grading_delay_seconds", 0.95) == 0.5
    assert loadgen.histogram_quantile(before, after, "otelgrade_grading_delay_seconds", 0.99) == float("inf")
    assert loadgen.histogram_quantile(after, after, "otelgrade_grading_delay_seconds", 0.99) is None
