"""Keeps the benchmark from rotting: its traces are what it claims, and a tiny run goes end to end."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from bench import loadgen, loads, predict, run, stages
from otelgrade.intake.decode import decode_traces


def test_loadgen_sends_agent_runs_children_first_root_last() -> None:
    bodies = loadgen.encode_requests(traces=7, spans_per_trace=6, per_request=3)
    assert len(bodies) == 3  # 3 + 3 + 1 runs
    by_trace: dict[str, list] = defaultdict(list)
    for body in bodies:
        for span in decode_traces(body).spans:
            by_trace[span.trace_id].append(span.read())
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


@pytest.fixture(scope="module")
def captured() -> loads.Load:
    """The captured load, built once (it rebuilds every fixture span to count its runs)."""
    return loads.captured(copies=1)


def test_captured_load_reissues_every_fixture_trace_under_fresh_ids(captured: loads.Load) -> None:
    load = captured.scaled(2)
    first, second = load.issue(), load.issue()
    ids = [{s.trace_id for body in bodies for s in decode_traces(body).spans} for bodies in (first, second)]
    assert len(first) == len(load.span_counts) and sum(load.span_counts) == 2 * sum(load.scaled(1).span_counts)
    assert sum(len(decode_traces(b).spans) for b in first) == sum(load.span_counts)
    assert not ids[0] & ids[1]  # a second issue would not be late
    assert load.runs == 2 * load.runs_per_copy > 0


def test_captured_load_never_cuts_a_trace_between_two_requests(captured: loads.Load) -> None:
    # A slow paced round sends a request a second, past the bench's `idle_timeout`: the first part of a trace cut
    # between two requests was closed without its root (in the second), and the round waited for runs never graded.
    requests_of: dict[str, set[int]] = defaultdict(set)
    for i, body in enumerate(captured.issue()):
        for span in decode_traces(body).spans:
            requests_of[span.trace_id].add(i)
    assert len(requests_of) > 500
    assert [t for t, found in requests_of.items() if len(found) > 1] == []


def test_a_tiny_benchmark_runs_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--agent-traces", "20", "--agent-copies", "2", "--spans-per-trace", "5", "--batch-traces", "10"]
    argv += ["--loads", "agent", "--concurrency", "2", "--repeat", "2", "--half-seconds", "0.3", "--judge", "0.2"]
    assert run.main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {(r["load"], r["protocol"]): r for r in doc["rows"]}
    assert set(rows) == {("agent mix", "grpc"), ("agent mix", "http"), ("agent mix, judge 0.2 s", "grpc")}
    for row in rows.values():
        assert len(row["saturation"]) == len(row["half_rate"]) == 2
        for r in row["saturation"]:
            assert r["spans"] == 200 and r["runs"] == 40
            assert r["end_to_end_s"] is not None and r["end_to_end_s"] >= r["send_s"]
            assert r["peak_rss_mb"] > 0 and r["cpu_us_per_span"] > 0 and r["floor_spans_per_s"] > 0
            assert r["floor_cpu_us_per_span"] > 0 and r["scrapes"] >= 1
        for r in row["half_rate"]:
            assert r["grading_delay_p99_s"] >= r["grading_delay_p50_s"] > 0
    assert set(doc["stages"]) == {"agent"} and doc["stages"]["agent"]["floor"] > 0
    (memory,) = doc["memory"]
    assert memory["spans_held"] == [200, 400]
    assert "CPUs" in doc["machine"]


def test_histogram_quantile_uses_only_observations_between_scrapes() -> None:
    name = "otelgrade_grading_delay_seconds_bucket"
    before = {f'{name}{{le="0.25"}}': 10.0, f'{name}{{le="0.5"}}': 10.0, f'{name}{{le="+Inf"}}': 10.0}
    after = {f'{name}{{le="0.25"}}': 10.0, f'{name}{{le="0.5"}}': 108.0, f'{name}{{le="+Inf"}}': 110.0}
    # 100 new observations: 98 in (0.25, 0.5], 2 above 0.5 -> the p99 lies in the +Inf bucket, the p95 (rank 95 of
    # 100) 95/98 of the way through (0.25, 0.5], as PromQL interpolates
    p95 = loadgen.histogram_quantile(before, after, "otelgrade_grading_delay_seconds", 0.95)
    assert p95 == pytest.approx(0.25 + 0.25 * 95 / 98)
    assert loadgen.histogram_quantile(before, after, "otelgrade_grading_delay_seconds", 0.99) == float("inf")
    assert loadgen.histogram_quantile(after, after, "otelgrade_grading_delay_seconds", 0.99) is None


def test_the_bench_predicts_spans_per_second_from_cpu_per_span_and_the_receiving_process() -> None:
    # One process: one core's worth whatever the machine; workers: the cores' worth, up to what one receiving
    # process can split.
    assert predict.predicted(8, 1, 50.0, None) == 20_000
    assert predict.predicted(4, 4, 50.0, 5.0) == 80_000
    assert predict.predicted(16, 16, 50.0, 5.0) == 200_000
    saturated = [
        loadgen.Result("grpc", 10, 1000, 0, 0.1, 0.1, 10_000.0, 100_000.0, 0.1, cpu, 1.0, 0.0, None, None, 1.0, 7.0, f)
        for cpu, f in ((50.0, None), (55.0, 6.0))
    ]
    rows = [run.Row("agent mix", "grpc", n, [r]) for n, r in ((1, saturated[0]), (2, saturated[1]))]
    lines = predict.table(rows)
    assert "× floor" in lines[1] and "predicted spans/s, 4 cores" in lines[1]
    one, two = lines[3], lines[4]
    assert "| 50.0 | 7.0 | 7.14 | 1.00 |" in one and "| 55.0 | 7.0 | 7.86 | 1.10 | 6.0 |" in two
    assert "| 72,727 |" in two  # 4 cores / 55 µs


def test_the_in_process_stages_are_timed_against_the_floor() -> None:
    figures = stages.timed("agent", repeat=1)
    assert set(figures) == {"receive", "rebuild", "grade", "floor"} and all(v > 0 for v in figures.values())
    chain = sum(figures[s] for s in stages.CHAIN)
    assert stages.row("agent mix", figures).endswith(f"| {chain:.1f} | {chain / figures['floor']:.2f} |")
