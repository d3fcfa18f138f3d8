"""OTLP load generator for otelgrade: agent traces in, spans/s end to end out, against a decode floor.

Pre-encodes ExportTraceServiceRequest bodies of realistic agent runs (an `invoke_agent` root, then
alternating `chat` and `execute_tool` children with GenAI semantic-convention attributes; children
first and the root last, the order SDKs export them), sends them over OTLP/gRPC or OTLP/HTTP with
several connections (or paced at a given rate), and waits until the server's `/metrics` shows every
run graded. It reports spans/s from the first byte sent to the last run graded, the server's CPU time
per span and peak RSS, the grading delay quantiles, and the floor:
parsing the same bytes with `protobuf` and reading every span and attribute into Python objects,
measured in this process. The ratio of the two is the figure that holds on a noisy machine.

usage: python bench/loadgen.py --target 127.0.0.1:4317 --protocol grpc --metrics http://127.0.0.1:9464/metrics
                               [--traces 20000] [--spans-per-trace 10] [--batch-traces 50]
                               [--concurrency 8] [--server-pid PID] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import math
import os
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as ts
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

GRPC_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
# While waiting for the last run to be graded, the server is scraped every SCRAPE_SHARE of the time since the first
# byte, within these bounds.
SCRAPE_SHARE, SCRAPE_MIN_S, SCRAPE_MAX_S = 0.05, 0.05, 1.0
TOOLS = ("search_flights", "get_booking", "lookup_customer", "send_email")


# --- traces -----------------------------------------------------------------------------------


def _set(attrs: Any, key: str, value: object) -> None:
    kv = attrs.add()
    kv.key = key
    if isinstance(value, bool):
        kv.value.bool_value = value
    elif isinstance(value, int):
        kv.value.int_value = value
    elif isinstance(value, float):
        kv.value.double_value = value
    elif isinstance(value, list):
        for item in value:
            kv.value.array_value.values.add().string_value = str(item)
    else:
        kv.value.string_value = str(value)


def _child_ops(children: int) -> list[str]:
    """chat, execute_tool, chat, ... ending on a chat (the final answer) whenever there are two or more."""
    ops = ["chat" if i % 2 == 0 else "execute_tool" for i in range(children)]
    if len(ops) >= 2 and ops[-1] != "chat":
        ops[-2:] = ["execute_tool", "chat"]
    return ops


def agent_run_spans(n_spans: int, t: int, start_ns: int) -> list[trace_pb2.Span]:
    """One agent run of `n_spans` spans (root last), attributes as GenAI-instrumented agents send them."""
    trace_id, root_id = os.urandom(16), os.urandom(8)
    step_ns = 40_000_000
    spans: list[trace_pb2.Span] = []
    call_id, tool = "", TOOLS[t % len(TOOLS)]
    args = {"query": f"customer {t} flight to Lisbon", "limit": 5}
    for i, op in enumerate(_child_ops(n_spans - 1)):
        s = trace_pb2.Span(trace_id=trace_id, span_id=os.urandom(8), parent_span_id=root_id)
        s.kind = trace_pb2.Span.SPAN_KIND_CLIENT if op == "chat" else trace_pb2.Span.SPAN_KIND_INTERNAL
        s.start_time_unix_nano = start_ns + (i + 1) * step_ns
        s.end_time_unix_nano = s.start_time_unix_nano + step_ns - 1_000_000
        _set(s.attributes, "gen_ai.operation.name", op)
        if op == "chat":
            s.name = "chat gpt-4o-mini"
            last = i == n_spans - 2
            call_id, tool = f"call_{t}_{i}", TOOLS[(t + i) % len(TOOLS)]
            if last:
                parts: list[dict[str, Any]] = [{"type": "text", "content": f"Your booking {t} is confirmed. " * 4}]
            else:
                parts = [{"type": "tool_call", "id": call_id, "name": tool, "arguments": args}]
            for key, value in (
                ("gen_ai.provider.name", "openai"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("gen_ai.response.model", "gpt-4o-mini-2024-07-18"),
                ("gen_ai.response.id", f"chatcmpl-{t}-{i}"),
                ("gen_ai.response.finish_reasons", ["stop" if last else "tool_calls"]),
                ("gen_ai.usage.input_tokens", 812 + 37 * i),
                ("gen_ai.usage.output_tokens", 54),
                ("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": parts}])),
            ):
                _set(s.attributes, key, value)
            if i == 0:
                user = [{"role": "user", "parts": [{"type": "text", "content": f"Book customer {t} a flight."}]}]
                _set(s.attributes, "gen_ai.input.messages", json.dumps(user))
                _set(s.attributes, "gen_ai.system_instructions", json.dumps([{"type": "text", "content": "Be brief."}]))
        else:
            s.name = f"execute_tool {tool}"
            _set(s.attributes, "gen_ai.tool.name", tool)
            _set(s.attributes, "gen_ai.tool.type", "function")
            _set(s.attributes, "gen_ai.tool.call.id", call_id)
            _set(s.attributes, "gen_ai.tool.call.arguments", json.dumps(args))
            result = {"rows": [{"id": f"F{t}{k}", "price": 120 + k, "seats": 3} for k in range(3)]}
            _set(s.attributes, "gen_ai.tool.call.result", json.dumps(result))
        s.status.code = trace_pb2.Status.STATUS_CODE_OK if op == "chat" else trace_pb2.Status.STATUS_CODE_UNSET
        spans.append(s)
    root = trace_pb2.Span(trace_id=trace_id, span_id=root_id, name="invoke_agent booker")
    root.kind = trace_pb2.Span.SPAN_KIND_INTERNAL
    root.start_time_unix_nano = start_ns
    root.end_time_unix_nano = start_ns + (n_spans + 1) * step_ns
    _set(root.attributes, "gen_ai.operation.name", "invoke_agent")
    _set(root.attributes, "gen_ai.agent.name", "booker")
    _set(root.attributes, "gen_ai.agent.id", "agent_booker_v3")
    _set(root.attributes, "gen_ai.conversation.id", f"conv_{t}")
    spans.append(root)
    return spans


def encode_requests(
    traces: int, spans_per_trace: int = 10, per_request: int = 50, service: str = "booking-agent"
) -> list[bytes]:
    """Serialized ExportTraceServiceRequests, `per_request` whole runs each (random, unique trace ids)."""
    if spans_per_trace < 1:
        raise ValueError("spans_per_trace must be at least 1 (the agent span)")
    start_ns = time.time_ns()
    bodies = []
    for first in range(0, traces, per_request):
        req = ts.ExportTraceServiceRequest()
        rs = req.resource_spans.add()
        for key, value in (
            ("service.name", service),
            ("service.version", "3.2.0"),
            ("telemetry.sdk.language", "python"),
            ("telemetry.sdk.name", "opentelemetry"),
            ("deployment.environment.name", "bench"),
        ):
            _set(rs.resource.attributes, key, value)
        ss = rs.scope_spans.add()
        ss.scope.name, ss.scope.version = "opentelemetry.instrumentation.openai_agents", "0.1.0"
        for t in range(first, min(first + per_request, traces)):
            ss.spans.extend(agent_run_spans(spans_per_trace, t, start_ns + t * 1_000_000))
        bodies.append(req.SerializeToString())
    return bodies


# --- the floor --------------------------------------------------------------------------------


def _value(v: common_pb2.AnyValue) -> object:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


def _attrs(kvs: Any) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in kvs:
        v = kv.value
        kind = v.WhichOneof("value")
        out[kv.key] = _value(v) if kind in ("array_value", "kvlist_value") else getattr(v, kind) if kind else None
    return out


def decode_walk(bodies: Sequence[bytes]) -> int:
    """Parse every body and read every span field and attribute into Python objects; return the span count."""
    n = 0
    for body in bodies:
        for rs in ts.ExportTraceServiceRequest.FromString(body).resource_spans:
            resource = _attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    attrs = _attrs(s.attributes)
                    _ = (s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.name, s.kind)
                    _ = (s.start_time_unix_nano, s.end_time_unix_nano, s.status.code, s.status.message)
                    events = [(e.name, e.time_unix_nano, _attrs(e.attributes)) for e in s.events]
                    _ = (attrs, resource, events)
                    n += 1
    return n


def count_spans(body: bytes) -> int:
    request = ts.ExportTraceServiceRequest.FromString(body)
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


def decode_floor(bodies: Sequence[bytes], repeat: int = 3) -> float:
    """The best spans/s of `repeat` passes of `decode_walk` over the same bytes."""
    return floor_figures(bodies, repeat)[0]


def floor_figures(bodies: Sequence[bytes], repeat: int = 3) -> tuple[float, float]:
    """The best spans/s and the least CPU µs per span (this thread's) of `repeat` passes of `decode_walk`: the CPU
    figure is what the server's CPU per span is compared with (waiting for a shared CPU does not count in either)."""
    best, least = 0.0, math.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.thread_time()
        n = decode_walk(bodies)
        best = max(best, n / (time.perf_counter() - t0))
        least = min(least, (time.thread_time() - c0) / max(1, n) * 1e6)
    return best, least


# --- the server's side ------------------------------------------------------------------------


def scrape(metrics_url: str) -> dict[str, float]:
    """`/metrics` -> {sample name with labels: value} (text exposition, comments skipped)."""
    with urllib.request.urlopen(metrics_url, timeout=5) as resp:
        text = resp.read().decode()
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def total(samples: dict[str, float], metric: str) -> float:
    """Sum of a metric over all its label sets."""
    pattern = re.compile(rf"^{re.escape(metric)}(\{{.*\}})?$")
    return sum(v for k, v in samples.items() if pattern.match(k))


def histogram_quantile(before: dict[str, float], after: dict[str, float], metric: str, q: float) -> float | None:
    """The `q` quantile of observations made between two scrapes, interpolated within its bucket as PromQL's
    `histogram_quantile` does (the bucket's upper bound when it is the `+Inf` one)."""
    buckets: list[tuple[float, float]] = []
    pattern = re.compile(rf'^{re.escape(metric)}_bucket\{{(?:.*,)?le="([^"]+)"(?:,.*)?\}}$')
    for key, value in after.items():
        match = pattern.match(key)
        if match:
            buckets.append((float(match.group(1)), value - before.get(key, 0.0)))
    buckets.sort()
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if bound == float("inf") or count == below:
                return bound
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return None


def proc_status_kb(pid: int, field: str) -> int | None:
    """A `kB` field of /proc/<pid>/status (VmHWM = peak RSS, VmRSS = current), None where unavailable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    """The child processes of a process (a `serve`'s grading workers), from /proc."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def cpu_seconds(pid: int, with_children: bool = True) -> float | None:
    """User + system CPU time so far of a process, its threads and its child processes (/proc/<pid>/stat), None
    where unavailable. A child that exits meanwhile takes its time with it."""
    total = None
    for each in (pid, *(children(pid) if with_children else ())):
        try:
            with open(f"/proc/{each}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total = (total or 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# --- sending ----------------------------------------------------------------------------------


def grpc_sender(target: str) -> Callable[[bytes], None]:
    import grpc

    channel = grpc.insecure_channel(target, options=[("grpc.max_send_message_length", 64 << 20)])
    export = channel.unary_unary(GRPC_EXPORT, request_serializer=lambda b: b, response_deserializer=lambda b: b)

    def send(body: bytes) -> None:
        export(body, timeout=60)

    return send


def http_sender(target: str, gzipped: bool = False) -> Callable[[bytes], None]:
    """POSTs to /v1/traces over one kept-alive connection per sending thread."""
    url = urlsplit(target if "://" in target else f"http://{target}")
    path = url.path if url.path not in ("", "/") else "/v1/traces"
    local = threading.local()
    headers = {"Content-Type": "application/x-protobuf"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"

    def send(body: bytes) -> None:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port or 4318, timeout=60)
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status} from {target}")

    return send


@dataclass
class Result:
    protocol: str
    runs: int  # agent runs the load carries (runs_graded grows by this much)
    spans: int
    request_bytes: int
    send_s: float
    end_to_end_s: float | None
    spans_per_s: float | None  # end to end (or sent, without --metrics)
    floor_spans_per_s: float | None
    ratio: float | None
    cpu_us_per_span: float | None  # the server's CPU time (all threads) from the first byte to the last run graded
    peak_rss_mb: float | None  # of the service's (receiving) process
    peak_spans_in_flight: float | None
    grading_delay_p50_s: float | None  # interpolated within the histogram's buckets
    grading_delay_p99_s: float | None
    worker_rss_mb: float | None = None  # the largest peak RSS of its grading workers, with several
    floor_cpu_us_per_span: float | None = None  # the floor's CPU per span (this process's thread)
    front_cpu_us_per_span: float | None = None  # the receiving process's own share of cpu_us_per_span (with workers)
    scrapes: int = 0  # of /metrics while waiting for the last run (their CPU is in cpu_us_per_span)


def _paced(
    send: Callable[[bytes], None], bodies: Sequence[bytes], spans: Sequence[int], rate: float, pool: Any
) -> None:
    """Submit each body when `rate` spans/s says it is due (the pool's threads send it)."""
    t0, due = time.perf_counter(), 0.0
    futures = []
    for body, n in zip(bodies, spans, strict=True):
        wait = t0 + due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        futures.append(pool.submit(send, body))
        due += n / rate
    for f in futures:
        f.result()


def run_load(
    bodies: Sequence[bytes],
    spans: Sequence[int],
    runs: int,
    protocol: str,
    target: str,
    metrics_url: str | None = None,
    *,
    concurrency: int = 8,
    server_pid: int | None = None,
    rate: float | None = None,
    floor: bool = True,
    timeout: float = 300.0,
    gzipped: bool = False,
) -> Result:
    """Send `bodies` (carrying `spans[i]` spans each) as fast as they are taken, or at `rate` spans/s; wait until
    `runs` more runs are graded (when `metrics_url` is given) and measure."""
    send = grpc_sender(target) if protocol == "grpc" else http_sender(target, gzipped)
    payload = [gzip.compress(b, 1) for b in bodies] if gzipped else list(bodies)
    before = scrape(metrics_url) if metrics_url else {}
    graded_before = total(before, "otelgrade_runs_graded_total")
    cpu_before = cpu_seconds(server_pid) if server_pid else None
    front_before = cpu_seconds(server_pid, with_children=False) if server_pid else None
    peak_in_flight = 0.0
    n_spans = sum(spans)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        if rate:
            _paced(send, payload, spans, rate, pool)
        else:
            for _ in pool.map(send, payload):
                pass
    sent = time.perf_counter() - t0
    done: float | None = None
    now: dict[str, float] = {}
    scrapes = 0
    if metrics_url:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = scrape(metrics_url)
            scrapes += 1
            peak_in_flight = max(peak_in_flight, total(now, "otelgrade_spans_in_flight"))
            if total(now, "otelgrade_runs_graded_total") - graded_before >= runs:
                done = time.perf_counter() - t0
                break
            # A scrape costs the server a few ms of CPU (process metrics read /proc; with workers, each worker's
            # too): waiting 5% of the time since the first byte places the end within 5% of the run, and keeps
            # the observer's share of the server's CPU small (a scrape every 50 ms of a wait was 5 µs a span of the
            # agent mix with two workers, 40% of the server's CPU over a minute's wait).
            time.sleep(min(SCRAPE_MAX_S, max(SCRAPE_MIN_S, SCRAPE_SHARE * (time.perf_counter() - t0))))
        else:
            raise TimeoutError(f"the server graded fewer than {runs} runs within {timeout:.0f}s")
    cpu_after = cpu_seconds(server_pid) if server_pid else None
    front_after = cpu_seconds(server_pid, with_children=False) if server_pid else None
    floor_rate, floor_cpu = floor_figures(bodies) if floor else (None, None)
    elapsed = done if done is not None else sent
    peak = proc_status_kb(server_pid, "VmHWM") if server_pid else None
    worker_peaks = [p for w in children(server_pid) if (p := proc_status_kb(w, "VmHWM"))] if server_pid else []
    delay = "otelgrade_grading_delay_seconds"
    return Result(
        protocol=protocol + ("+gzip" if gzipped else ""),
        runs=runs,
        spans=n_spans,
        request_bytes=sum(len(b) for b in bodies),
        send_s=sent,
        end_to_end_s=done,
        spans_per_s=n_spans / elapsed,
        floor_spans_per_s=floor_rate,
        ratio=(n_spans / done / floor_rate) if done and floor_rate else None,
        cpu_us_per_span=(cpu_after - cpu_before) / n_spans * 1e6 if cpu_before is not None and cpu_after else None,
        peak_rss_mb=peak / 1024 if peak else None,
        worker_rss_mb=max(worker_peaks) / 1024 if worker_peaks else None,
        floor_cpu_us_per_span=floor_cpu,
        front_cpu_us_per_span=(
            (front_after - front_before) / n_spans * 1e6
            if worker_peaks and front_before is not None and front_after
            else None
        ),
        peak_spans_in_flight=peak_in_flight if metrics_url else None,
        scrapes=scrapes,
        grading_delay_p50_s=histogram_quantile(before, now, delay, 0.5) if now else None,
        grading_delay_p99_s=histogram_quantile(before, now, delay, 0.99) if now else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--target", required=True, help="host:port (gRPC) or host:port / URL (HTTP)")
    p.add_argument("--protocol", choices=("grpc", "http"), default="grpc")
    p.add_argument("--metrics", help="the server's /metrics URL; without it only the send rate is measured")
    p.add_argument("--traces", type=int, default=20000)
    p.add_argument("--spans-per-trace", type=int, default=10)
    p.add_argument("--batch-traces", type=int, default=50, help="agent runs per export request")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--server-pid", type=int, help="read the server's peak RSS from /proc/<pid>/status")
    p.add_argument("--grades-per-run", type=int, default=1, help="suites each run matches (runs_graded per run)")
    p.add_argument("--rate", type=float, help="send at this many spans/s instead of as fast as they are taken")
    p.add_argument("--gzip", action="store_true", help="gzip HTTP bodies")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = p.parse_args(argv)
    bodies = encode_requests(args.traces, args.spans_per_trace, args.batch_traces)
    result = run_load(
        bodies,
        [count_spans(b) for b in bodies],
        args.traces * args.grades_per_run,
        args.protocol,
        args.target,
        args.metrics,
        concurrency=args.concurrency,
        server_pid=args.server_pid,
        rate=args.rate,
        gzipped=args.gzip,
    )
    if args.json:
        print(json.dumps(asdict(result)))
        return 0
    print(f"sent {result.spans:,} spans ({result.request_bytes / 1e6:.1f} MB) in {result.send_s:.2f}s")
    if result.end_to_end_s is not None and result.spans_per_s is not None:
        print(f"every run graded after {result.end_to_end_s:.2f}s: {result.spans_per_s:,.0f} spans/s end to end")
    print(f"decode+walk floor on the same bytes: {result.floor_spans_per_s or 0:,.0f} spans/s", end="")
    print(f"; ratio {result.ratio:.2f}" if result.ratio else "")
    if result.cpu_us_per_span:
        print(f"server CPU {result.cpu_us_per_span:.1f} µs/span")
    if result.peak_rss_mb:
        print(f"server peak RSS {result.peak_rss_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
