"""Two limits on what traffic can cost: `metrics.label_limit` caps the series of `otelgrade_runs_total` in all
(not per label), and a JSON Schema grader never fetches a remote `$ref` unless its config enables it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import GradeResult
from otelgrade.core.trajectory import Trajectory
from otelgrade.export.exporter import Exporter
from otelgrade.grade.graders import build_grader, grade_safely
from otelgrade.grade.grading import Grading


def test_label_limit_caps_the_run_series_in_all() -> None:
    metrics = Metrics(label_limit=50)
    grading = Grading([], Exporter(metrics), metrics)
    for service in range(40):
        for agent in range(40):  # 1,600 combinations; per-label caps of 50 would let all of them through
            grading.grade(
                Trajectory(trace_id="ab" * 16, span_id="cd" * 8, service_name=f"s{service}", agent_name=f"a{agent}")
            )
    series = [s for f in metrics.registry.collect() if f.name == "otelgrade_runs" for s in f.samples]
    series = [s for s in series if s.name == "otelgrade_runs_total"]
    assert len(series) == 51  # 50 admitted + other/other
    assert sum(s.value for s in series) == 1600  # every run counted
    folded = next(s for s in series if s.labels == {"service": "other", "agent": "other"})
    assert folded.value == 1550
    assert metrics.registry.get_sample_value("otelgrade_label_overflow_total", {"label": "agent"}) == 1550


class _SchemaHost(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _SchemaHost.requests.append(self.path)
        body = json.dumps({"type": "string", "maxLength": 3}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def schema_host() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SchemaHost)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    _SchemaHost.requests = []
    try:
        yield f"http://127.0.0.1:{server.server_port}/short.json"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def _grade(params: dict[str, object], output: str) -> GradeResult:
    result = grade_safely(build_grader("potato.json_schema_match", params), _output(output))
    assert isinstance(result, GradeResult)
    return result


def _output(text: str) -> Trajectory:
    return Trajectory(trace_id="1" * 32, span_id="2" * 16, output=text)


def test_a_remote_ref_is_not_fetched_unless_enabled(schema_host: str) -> None:
    schema = {"type": "object", "properties": {"code": {"$ref": schema_host}}}
    local = _grade({"schema": schema}, '{"code": "abcd"}')
    assert local.outcome == "error" and "remote_refs: true" in local.rationale
    assert _SchemaHost.requests == []

    grader = build_grader("potato.json_schema_match", {"schema": schema, "remote_refs": True})
    results = [grade_safely(grader, _output(text)) for text in ('{"code": "abcd"}', '{"code": "ab"}', '{"code": "x"}')]
    assert [r.outcome for r in results if isinstance(r, GradeResult)] == ["fail", "pass", "pass"]
    assert _SchemaHost.requests == ["/short.json"]  # fetched once, not per grade


def test_local_refs_still_resolve() -> None:
    schema = {"$defs": {"short": {"type": "string", "maxLength": 3}}, "properties": {"code": {"$ref": "#/$defs/short"}}}
    assert _grade({"schema": schema}, '{"code": "abcd"}').outcome == "fail"
    assert _grade({"schema": schema}, '{"code": "ab"}').outcome == "pass"
