"""Senders that try to tie the receivers up, against a real `otelgrade serve`: request bodies that trickle in
get 408 after `receivers.body_read_timeout` and hold no more of the receive allowance than they sent, so
other senders are served meanwhile; gRPC messages are refused on their metadata (no token) or on the allowance
before the server reads them, which its resident memory shows; sender-controlled names cannot forge log lines.
"""

from __future__ import annotations

import gzip
import http.client
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

import grpc

from tests.conftest import ServeProcess
from tests.receivers_harness import sid, span_pb, traces_request

Serve = Callable[..., ServeProcess]
MIB = 1024 * 1024
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
PROTOBUF = "application/x-protobuf"


def post(server: ServeProcess, body: bytes) -> int:
    """Send as the Collector's otlphttp exporter does by default: gzip-compressed."""
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    try:
        headers = {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"}
        connection.request("POST", "/v1/traces", body=gzip.compress(body), headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def rss_mib(server: ServeProcess) -> float:
    """The server process's resident memory, from /proc."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    assert match, status
    return int(match.group(1)) / 1024


# --- slow senders ------------------------------------------------------------------------------------


@contextmanager
def tricklers(server: ServeProcess, count: int, every: float = 1.0) -> Iterator[list[socket.socket]]:
    """`count` chunked uploads that each send one body byte every `every` seconds (until the server answers)."""
    head = (
        b"POST /v1/traces HTTP/1.1\r\nHost: otelgrade\r\nContent-Type: application/x-protobuf\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    senders = [socket.create_connection(("127.0.0.1", server.http_port)) for _ in range(count)]
    for sender in senders:
        sender.sendall(head + b"1\r\n\n\r\n")
    done = threading.Event()

    def trickle() -> None:
        while not done.wait(every):
            for sender in senders:
                with suppress(OSError):  # answered and closed by the server
                    sender.sendall(b"1\r\n\n\r\n")

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield senders
    finally:
        done.set()
        thread.join()
        for sender in senders:
            sender.close()


def answer_status(sender: socket.socket, timeout: float) -> int:
    sender.settimeout(timeout)
    response = http.client.HTTPResponse(sender)
    response.begin()
    return response.status


def test_slow_uploads_get_408_and_never_keep_other_senders_out(serve: Serve) -> None:
    server = serve({"receivers": {"body_read_timeout": "3s"}})
    run = traces_request([span_pb(sid(1), name="invoke_agent", **{"gen_ai.operation.name": "invoke_agent"})])
    began = time.monotonic()
    with tricklers(server, 16) as senders:
        time.sleep(0.5)  # every upload is under way
        statuses = [post(server, run) for _ in range(5)]
        receiving = server.metric("otelgrade_bytes_receiving")
        answers = [answer_status(sender, timeout=10) for sender in senders]
    waited = time.monotonic() - began
    print(f"others: {statuses}; bytes receiving while 16 trickle: {receiving:.0f}; slow ones: {set(answers)}")
    assert statuses == [200] * 5  # served while the slow uploads trickle on
    assert receiving < 1024  # each slow upload holds what it sent, not what it might send
    assert answers == [408] * 16 and 3 <= waited < 9
    server.wait_for_metric("otelgrade_bytes_receiving", None, lambda v: v == 0)
    assert server.metric("otelgrade_requests_total", {"protocol": "http", "signal": "traces", "result": "timeout"})
    assert server.stop() == 0


# --- gRPC messages refused before they are read --------------------------------------------------------


def flood(server: ServeProcess, calls: int, size: int, metadata: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """`calls` Export calls of a `size`-byte message, 8 at a time; the status code of each."""
    message = b"\n" + bytes(size - 1)  # a field 1 whose length is never reached: never decodes

    def call(_: int) -> str:
        with grpc.insecure_channel(server.grpc_address) as channel:
            export = channel.unary_unary(EXPORT)
            try:
                export(message, timeout=20, metadata=metadata)
            except grpc.RpcError as error:
                return str(error.code().name)
        return "OK"

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(call, range(calls)))


def test_grpc_messages_without_the_token_are_refused_without_being_read(serve: Serve, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    server = serve({"receivers": {"auth": {"bearer_token_file": str(token_file)}}})
    before = rss_mib(server)
    codes = flood(server, 40, 20 * MIB - 64)
    grown = rss_mib(server) - before
    print(f"RSS {before:.0f} MiB -> +{grown:.0f} MiB after 40 unauthenticated 20 MiB calls")
    assert codes == ["UNAUTHENTICATED"] * 40
    assert grown < 100  # 800 MiB of messages were sent; none was held
    wrong = flood(server, 1, 1024, metadata=(("authorization", "Bearer nope"),))
    assert wrong == ["UNAUTHENTICATED"]
    assert server.stop() == 0


def test_grpc_messages_are_refused_before_they_are_read_while_the_receive_allowance_is_full(serve: Serve) -> None:
    server = serve({"limits": {"max_bytes_receiving": "4MiB"}})
    run = traces_request([span_pb(sid(1), name="invoke_agent", blob="x" * 3 * MIB)])
    upload = socket.create_connection(("127.0.0.1", server.http_port))  # 3 MiB of the 4 MiB allowance, held
    head = f"POST /v1/traces HTTP/1.1\r\nHost: otelgrade\r\nContent-Type: {PROTOBUF}\r\nContent-Length: {len(run)}"
    upload.sendall(f"{head}\r\n\r\n".encode() + run[:-1000])
    server.wait_for_metric("otelgrade_bytes_receiving", None, lambda v: v >= len(run) - 1000)
    before = rss_mib(server)
    with server.health_probe() as stalls:
        codes = flood(server, 40, 20 * MIB - 64)
    grown = rss_mib(server) - before
    print(f"RSS {before:.0f} MiB -> +{grown:.0f} MiB after 40 20 MiB calls; worst /healthz {max(stalls) * 1000:.0f} ms")
    assert codes == ["UNAVAILABLE"] * 40
    # 800 MiB of messages were sent; none was read (reading them grew RSS by 985 MiB). What grpc's transport
    # buffers before a call is refused varies with load: 5-28 MiB alone, up to 103 MiB inside the whole suite.
    assert grown < 200 and max(stalls) < 0.5
    upload.sendall(run[-1000:])
    assert answer_status(upload, timeout=10) == 200  # the held upload completes
    upload.close()
    assert server.stop() == 0


# --- log lines ---------------------------------------------------------------------------------------


def test_names_sent_by_an_agent_cannot_forge_log_lines(serve: Serve) -> None:
    forged = "\n2030-01-01 00:00:00,000 ERROR otelgrade.service.server: forged\r"
    server = serve(
        {"suites": [{"name": "strict", "graders": [{"name": "no_tools", "type": "max_tool_calls", "max": 0}]}]}
    )
    root = span_pb(
        sid(1),
        name="invoke_agent",
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"agent{forged}\x1b[2J"},
    )
    tool = span_pb(
        sid(2), sid(1), name="execute_tool", **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"}
    )
    assert post(server, traces_request([root, tool], service=f"svc{forged}")) == 200
    server.wait_for_metric("otelgrade_grades_total", {"suite": "strict", "grader": "no_tools", "outcome": "fail"}, 1)
    assert server.stop() == 0
    lines = server.log().splitlines()
    failed = [line for line in lines if "run failed:" in line]
    print("\n".join(failed))
    assert len(failed) == 1 and not [line for line in lines if "forged" in line and "run failed:" not in line]
    assert r"service=svc\n2030-01-01 00:00:00,000 ERROR otelgrade.service.server: forged\r" in failed[0]
    assert r"agent=agent\n2030" in failed[0] and r"\x1b[2J" in failed[0] and "\x1b" not in server.log()
