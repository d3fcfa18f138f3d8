"""Online/offline parity: the captured fixtures replayed through the OTel SDK's exporters into
`otelgrade serve` produce exactly the grade counts on /metrics that `otelgrade grade` computes
offline from the same files, with a config of several suites and one grader of each family.

One scenario of each captured source is replayed, the scenario rotating from source to source so that every
kind (happy, forbidden, tool error, handoff, ...) is sent by several instrumentations; every scenario of every
source is rebuilt in process by tests/e2e/test_rebuild_captures.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from otelgrade.intake.decode import decode_traces
from tests.paths import FIXTURES
from tests.replay import exporters, grade_offline, replay_folder

FIXTURES = FIXTURES

SUITES = [
    {
        "name": "all",
        "graders": [
            {"name": "completed", "type": "task_completed"},
            {"name": "budget", "type": "max_tool_calls", "max": 5},
            {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
            {"name": "no_rm", "type": "tool-calls", "config": {"disallowed": ["^delete_"]}},
        ],
    },
    {
        "name": "booking",
        "match": {"agent_name": "^booking"},
        "graders": {
            "mentions_booking": {"kind": "tool", "function": "contains", "ground_truth": "book"},
        },
    },
    {
        "name": "pydantic",
        "match": {"service.name": "^fx-genai-pydantic"},
        "graders": [
            {"name": "searched", "evaluator": "tool_use", "params": {"expected_tool": "search_flights"}},
            {"expected": {"max_llm_calls": 3, "tools_called": ["search_flights"]}, "name": "expected"},
        ],
    },
]


def scenario_folders() -> list[Path]:
    """One scenario folder of each source folder, taking the next scenario in line for each next source."""
    by_source: dict[Path, list[Path]] = {}
    for folder in sorted({p.parent for p in FIXTURES.rglob("*.pb")}):
        by_source.setdefault(folder.parent, []).append(folder)
    return [scenarios[i % len(scenarios)] for i, scenarios in enumerate(by_source.values())]


def trace_ids(folders: list[Path]) -> set[str]:
    return {
        s.trace_id
        for f in folders
        for p in f.rglob("*.pb")
        if not p.name.endswith(".logs.pb")
        for s in decode_traces(p.read_bytes()).spans
    }


def grade_counts(metrics_text: str) -> Counter[tuple[str, str, str]]:
    counts: Counter[tuple[str, str, str]] = Counter()
    for family in text_string_to_metric_families(metrics_text):
        for sample in family.samples:
            if sample.name == "otelgrade_grades_total" and sample.value:
                counts[(sample.labels["suite"], sample.labels["grader"], sample.labels["outcome"])] += int(sample.value)
    return counts


def test_serve_and_grade_agree_on_a_scenario_of_every_source(serve, tmp_path):
    folders = scenario_folders()
    assert len(folders) >= 40
    server = serve({"suites": SUITES, "assembly": {"settle": "300ms", "idle_timeout": "5s"}})
    server.write_config(server.config)

    offline_grades = grade_offline(server.config_path, folders)
    expected = Counter((g["suite"], g["grader"], g["outcome"]) for g in offline_grades)
    assert {outcome for _, _, outcome in expected} >= {"pass", "fail"}  # the config really discriminates
    assert {suite for suite, _, _ in expected} == {"all", "booking", "pydantic"}

    grpc = exporters("grpc", server.grpc_address, server.http_url)
    http = exporters("http", server.grpc_address, server.http_url)
    for i, folder in enumerate(folders):
        span_exporter, log_exporter = grpc if i % 2 else http
        replay_folder(folder, span_exporter, log_exporter)
    for exporter in (*grpc, *http):
        exporter.shutdown()

    traces = len(trace_ids(folders))
    server.wait_for_metric("otelgrade_traces_completed_total", None, lambda _: _completed(server) >= traces, 30)
    server.wait_for_metric(
        "otelgrade_grades_total",
        None,
        lambda _: sum(grade_counts(server.metrics_text()).values()) >= len(offline_grades),
        30,
    )
    assert grade_counts(server.metrics_text()) == expected
    assert server.metric("otelgrade_late_spans_total") == 0
    assert server.metric("otelgrade_spans_rejected_total") == 0

    assert server.stop() == 0
    online = Counter((g["suite"], g["grader"], g["outcome"]) for g in server.grades())
    assert online == expected


def _completed(server) -> float:
    return sum(
        s.value
        for family in text_string_to_metric_families(server.metrics_text())
        for s in family.samples
        if s.name == "otelgrade_traces_completed_total"
    )
