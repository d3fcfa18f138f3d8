"""Turn records: with replicas, each rebuilt run that names a conversation is sent as one OTLP log record to the
conversation router (a Collector routing logs by `gen_ai.conversation.id`), which hands it to the replica that
owns the conversation. There it joins the conversation's other turns (`Grading.hold_routed`).

A record carries the conversation id as its attribute and as the only attribute of its resource (so routing by
attributes or by resource both route by conversation), the run's trace and span ids, and the run's trajectory JSON
as its body, signed with the secret the replicas share (`conversations.turn_token_file`). A replica holds a record
only when it routes turns itself and the signature is the secret's, and never one whose body sets a ground truth:
anyone who can reach a receiver could otherwise add turns to a conversation, choose the trace its grades attach
to, or hand a grader its reference answer. Sending never blocks grading: records wait in a bounded queue for a
thread that posts them in batches, retrying a while; what cannot be sent is counted (`otelgrade_turn_records_total`)
and logged.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2

from otelgrade.core.metrics import Metrics
from otelgrade.core.spans import CONVERSATION_TURN_EVENT, TURN_SIGNATURE
from otelgrade.core.trajectory import Trajectory

log = logging.getLogger(__name__)

QUEUE_SIZE = 10_000  # records waiting to be sent
BATCH = 200  # records per request at most
ATTEMPTS = 5  # per request, with backoff from 0.2 s
ID_ATTRIBUTE = "gen_ai.conversation.id"


class TurnRefused(ValueError):
    """A turn record this replica does not hold: why."""


def signature(secret: bytes, body: str) -> str:
    """The signature of a turn record's body."""
    return hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()


def turn_body(run: Trajectory) -> str:
    """What a turn record carries: the run's trajectory JSON, without a ground truth (a verdict's reference never
    travels between replicas: the grader's config gives it)."""
    if run.ground_truth is not None:
        run = run.model_copy(update={"ground_truth": None})
    return run.model_dump_json()


def read_turn(body: str, signed: str, secret: bytes | None) -> Trajectory:
    """The run a turn record carries, if this replica may hold it. Raises `TurnRefused` naming why, or ValueError
    for a body that is not a trajectory."""
    if secret is None:
        raise TurnRefused("this replica does not route turns (conversations.route_turns is not set)")
    if not hmac.compare_digest(signed.encode(), signature(secret, body).encode()):
        raise TurnRefused("its signature is not the replicas' (conversations.turn_token_file)")
    run = Trajectory.model_validate_json(body)
    if run.ground_truth is not None:
        raise TurnRefused("it sets a ground truth, which turn records never carry")
    return run


def turn_request(runs: Sequence[Trajectory], secret: bytes) -> bytes:
    """One ExportLogsServiceRequest holding a turn record per run (each under a resource of its conversation),
    signed with `secret`."""
    request = logs_service_pb2.ExportLogsServiceRequest()
    for run in runs:
        cid = run.conversation_id or ""
        resource_logs = request.resource_logs.add()
        resource_logs.resource.attributes.add(key=ID_ATTRIBUTE, value=common_pb2.AnyValue(string_value=cid))
        scope_logs = resource_logs.scope_logs.add()
        scope_logs.scope.name = "otelgrade"
        record: logs_pb2.LogRecord = scope_logs.log_records.add()
        record.time_unix_nano = time.time_ns()
        record.event_name = CONVERSATION_TURN_EVENT
        record.trace_id = bytes.fromhex(run.trace_id)
        record.span_id = bytes.fromhex(run.span_id)
        body = turn_body(run)
        record.attributes.add(key=ID_ATTRIBUTE, value=common_pb2.AnyValue(string_value=cid))
        record.attributes.add(key=TURN_SIGNATURE, value=common_pb2.AnyValue(string_value=signature(secret, body)))
        record.body.string_value = body
    return bytes(request.SerializeToString())


class TurnRouter:
    """Callable with each turn to route; `close` sends what is queued (within a deadline) and stops."""

    def __init__(self, endpoint: str, metrics: Metrics, secret: bytes | None, queue_size: int = QUEUE_SIZE) -> None:
        if not secret:
            raise ValueError(
                "turn records are signed: give the replicas' shared secret (conversations.turn_token_file)"
            )
        self.secret = secret
        self.url = endpoint.rstrip("/") + ("" if endpoint.rstrip("/").endswith("/v1/logs") else "/v1/logs")
        self.metrics = metrics
        self._queue: queue.Queue[Trajectory | None] = queue.Queue(queue_size)
        for result in ("sent", "received", "dropped", "failed", "refused"):
            metrics.turn_records.labels(result)
        self._thread = threading.Thread(target=self._send_loop, name="otelgrade-turns", daemon=True)
        self._thread.start()

    def __call__(self, run: Trajectory) -> None:
        try:
            self._queue.put_nowait(run)
        except queue.Full:
            self.metrics.turn_records.labels("dropped").inc()

    def close(self, timeout: float = 10.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def _send_loop(self) -> None:
        while True:
            first = self._queue.get()
            batch = [first] if first is not None else []
            while first is not None and len(batch) < BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    first = None
                    break
                batch.append(more)
            if batch:
                self._send(batch)
            if first is None:
                return

    def _send(self, runs: list[Trajectory]) -> None:
        body = turn_request(runs, self.secret)
        headers = {"Content-Type": "application/x-protobuf"}
        for attempt in range(ATTEMPTS):
            try:
                request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=10) as response:
                    response.read()
                self.metrics.turn_records.labels("sent").inc(len(runs))
                return
            except (OSError, urllib.error.URLError) as exc:
                problem = exc
                time.sleep(0.2 * 2**attempt)
        self.metrics.turn_records.labels("failed").inc(len(runs))
        log.error("conversation router %s did not take %d turn record(s): %s", self.url, len(runs), problem)
