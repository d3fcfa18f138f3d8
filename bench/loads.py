"""The benchmark's loads: the synthetic agent mix and the captured fixture traces, each reissued with fresh
trace ids every time it is sent (a trace id the server has decided already would only count as late).

A `Load` holds export requests as parsed messages; `issue` rewrites their trace ids and serializes them.
The captured load replays every `*.pb` trace request under `tests/fixtures/traces` and
`tests/fixtures/frameworks` in arrival order, merged into requests of at most `MAX_SPANS` spans (as an
SDK's batch processor sends them), a trace never cut between two requests; log requests are not replayed.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as ts

from bench import loadgen
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
MAX_SPANS = 512  # the OpenTelemetry SDKs' default max_export_batch_size


@dataclass
class Load:
    """Export requests to send `copies` times over, each copy under fresh trace ids."""

    name: str
    requests: list[ts.ExportTraceServiceRequest]
    runs_per_copy: int  # requests one copy carries (what `otelgrade_runs_graded_total` grows by)
    copies: int = 1

    @property
    def span_counts(self) -> list[int]:
        """Spans per body of one `issue`."""
        return [sum(len(ss.spans) for ss in _scopes(r)) for r in self.requests] * self.copies

    @property
    def runs(self) -> int:
        return self.runs_per_copy * self.copies

    def issue(self) -> list[bytes]:
        """Every request, `copies` times, each copy's traces under new random trace ids."""
        originals = [[s.trace_id for ss in _scopes(r) for s in ss.spans] for r in self.requests]
        bodies = []
        for _ in range(self.copies):
            fresh: dict[bytes, bytes] = {}
            for request, ids in zip(self.requests, originals, strict=True):
                spans = (s for ss in _scopes(request) for s in ss.spans)
                for span, trace_id in zip(spans, ids, strict=True):
                    span.trace_id = fresh.get(trace_id) or fresh.setdefault(trace_id, os.urandom(16))
                bodies.append(request.SerializeToString())
        for request, ids in zip(self.requests, originals, strict=True):  # leave the templates as they were
            for span, trace_id in zip((s for ss in _scopes(request) for s in ss.spans), ids, strict=True):
                span.trace_id = trace_id
        return bodies

    def scaled(self, copies: int) -> Load:
        return Load(self.name, self.requests, self.runs_per_copy, copies)


def _scopes(request: ts.ExportTraceServiceRequest) -> Iterator[object]:
    for rs in request.resource_spans:
        yield from rs.scope_spans


def agent_mix(traces: int, spans_per_trace: int, batch_traces: int) -> Load:
    """`loadgen`'s synthetic agent runs: one run per trace."""
    bodies = loadgen.encode_requests(traces, spans_per_trace, batch_traces)
    return Load("agent mix", [ts.ExportTraceServiceRequest.FromString(b) for b in bodies], traces)


def captured(copies: int) -> Load:
    """Every captured trace request of the fixtures, merged in arrival order; its requests (the runs a suite
    without `match` grades: nested agents' runs are not counted) found by the rebuild of every span at once.
    A scenario's files go into one request, past `MAX_SPANS` if need be, since a later file can continue any of
    its traces (an MCP server's trace interleaves with the client's). Cut,
    its root came in the second request (SDKs export children first); a slow half-rate round (one request a
    second at 500 spans/s) sent that more than `idle_timeout` after the first, which was then closed rootless and
    rebuilt alone, the rest counted late: the round waited for runs that never came."""
    files = sorted(
        p
        for folder in ("traces", "frameworks")
        for p in (FIXTURES / folder).glob("*/*/*.pb")
        if not p.name.endswith(".logs.pb")
    )
    requests: list[ts.ExportTraceServiceRequest] = []
    current, held = ts.ExportTraceServiceRequest(), 0
    for _, paths in itertools.groupby(files, key=lambda p: p.parent):
        scenario = ts.ExportTraceServiceRequest()
        for path in paths:
            scenario.MergeFromString(path.read_bytes())
        n = sum(len(ss.spans) for ss in _scopes(scenario))
        if held and held + n > MAX_SPANS:
            requests.append(current)
            current, held = ts.ExportTraceServiceRequest(), 0
        current.resource_spans.extend(scenario.resource_spans)
        held += n
    if held:
        requests.append(current)
    spans = [s for r in requests for s in decode_traces(r.SerializeToString()).spans]
    requests_made = sum(run.parent_span_id is None for run in rebuild(spans))
    return Load("captured", requests, requests_made, copies)
