"""Overload: senders push runs carrying a large attribute (1 MB by default) at `otelgrade serve` as fast as it
accepts them for `--seconds`, backing off for Retry-After on 503 as OTLP exporters do. A long `--settle` keeps
every run held, so what is held reaches `--max-bytes-held`. Prints the server's RSS before, during (peak and
mean) and after everything held has been graded, and how many requests were pushed back.

usage: python -m bench.overload [--seconds 60] [--senders 8] [--attribute-mb 1] [--max-bytes-held 1GiB]
                                [--settle 30s]
"""

from __future__ import annotations

import argparse
import http.client
import tempfile
import threading
import time
from pathlib import Path

from bench import loadgen
from bench.run import _ports, serve, server_config
from tests.receivers_harness import sid, span_pb, traces_request


def big_run(n: int, attribute_bytes: int) -> bytes:
    trace_id = n.to_bytes(16, "big")
    blob = "x" * attribute_bytes
    return traces_request(
        [span_pb(sid(1), trace_id=trace_id), span_pb(sid(2), sid(1), trace_id=trace_id, payload=blob)]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--attribute-mb", type=float, default=1.0)
    parser.add_argument("--max-bytes-held", default="1GiB")
    parser.add_argument("--settle", default="30s")
    args = parser.parse_args()
    ports = _ports()
    config = server_config(ports, args.settle)
    config["limits"] = {"max_bytes_held": args.max_bytes_held}
    counts = {"ok": 0, "pushed_back": 0}
    lock = threading.Lock()
    stop = threading.Event()
    attribute = int(args.attribute_mb * 1_000_000)

    def sender(index: int) -> None:
        n = index << 40
        connection = http.client.HTTPConnection("127.0.0.1", ports["http"], timeout=60)
        while not stop.is_set():
            n += 1
            connection.request("POST", "/v1/traces", big_run(n, attribute), {"Content-Type": "application/x-protobuf"})
            response = connection.getresponse()
            response.read()
            with lock:
                counts["ok" if response.status == 200 else "pushed_back"] += 1
            if response.status == 503:
                time.sleep(float(response.getheader("Retry-After") or 1))

    with tempfile.TemporaryDirectory() as workdir, serve(Path(workdir), "overload", config) as server:
        time.sleep(1)
        baseline = loadgen.proc_status_kb(server.pid, "VmRSS") or 0
        threads = [threading.Thread(target=sender, args=(i + 1,), daemon=True) for i in range(args.senders)]
        for thread in threads:
            thread.start()
        samples = []
        ends = time.monotonic() + args.seconds
        while time.monotonic() < ends:
            time.sleep(1)
            samples.append(loadgen.proc_status_kb(server.pid, "VmRSS") or 0)
        stop.set()
        for thread in threads:
            thread.join()
        while loadgen.total(loadgen.scrape(server.metrics_url), "otelgrade_bytes_held") > 0:
            time.sleep(0.5)
        time.sleep(3)  # the release of freed memory follows the drain within a tick or two
        after = loadgen.proc_status_kb(server.pid, "VmRSS") or 0
    mb = 1 / 1024
    print(
        f"{args.seconds:.0f}s of {args.senders} senders, runs with a {args.attribute_mb:g} MB attribute, "
        f"limits.max_bytes_held {args.max_bytes_held}, settle {args.settle}"
    )
    print(f"requests accepted {counts['ok']:,}, pushed back (503) {counts['pushed_back']:,}")
    print(
        f"RSS MB: before {baseline * mb:,.0f}, during peak {max(samples) * mb:,.0f} / mean "
        f"{sum(samples) / len(samples) * mb:,.0f}, after drain {after * mb:,.0f}"
    )


if __name__ == "__main__":
    main()
