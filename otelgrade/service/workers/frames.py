"""The pipe between the receiving process and one grading worker: frames of a kind byte and a payload, each
preceded by its length. Requests go down as the bytes that arrived (or the part of them the worker owns);
answers, metrics, and the runs and grades the grades page shows come back up."""

from __future__ import annotations

import asyncio
import struct

from otelgrade.intake.receivers.base import Encoding, ExportResult, Signal

HEADER = struct.Struct("!IB")  # payload length, kind

# Receiving process -> worker.
EXPORT = 1  # a request to keep: EXPORT_HEAD, the protocol's name, the body
SCRAPE = 2  # the worker's metrics, please: request id
HOLD_TURN = 3  # a run that is a turn of a conversation this worker owns (trajectory JSON)
FINISH = 4  # shutting down: every worker has graded what it held, so no more turns come; finish conversations
PING = 5  # are you there? (the heartbeat): answered at once with PONG
# Worker -> receiving process.
RESULT = 11  # a request's answer: RESULT_HEAD, the message
METRICS = 12  # request id, the worker's metrics in the OpenMetrics text format
RUN = 13  # a run about to be graded, as the grades page keeps it: RUN_HEAD, trace id, span id, trajectory JSON
GRADES = 14  # a batch of grades (a JSON list of grade records)
READY = 15  # replay done, requests are taken
BUSY = 16  # one byte: 1 while the worker wants senders to back off, 0 once it does not
CONVERSATION = 17  # a conversation about to be graded (its trajectory JSON, turns included)
TURN = 19  # a run that is a turn of a conversation: ID-length-prefixed conversation id, then trajectory JSON
DRAINED = 20  # shutting down: what the worker held is graded (its turns sent up before this); it awaits FINISH
PONG = 21  # the heartbeat's answer
UNMATCHED = 18  # what arrived and was not graded since the worker started (`UnmatchedRuns` as JSON), when it changes

EXPORT_HEAD = struct.Struct("!IBBB")  # request id, signal, encoding, length of the protocol's name
RESULT_HEAD = struct.Struct("!IBI")  # request id, status, items rejected
ID = struct.Struct("!I")
OK, INVALID, OVERLOADED = 0, 1, 2  # RESULT statuses
SIGNALS: tuple[Signal, Signal] = ("traces", "logs")
ENCODINGS: tuple[Encoding, Encoding] = ("protobuf", "json")


def frame(kind: int, *parts: bytes) -> bytes:
    payload = b"".join(parts)
    return HEADER.pack(len(payload), kind) + payload


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes] | None:
    """The next frame's (kind, payload); None once the other side has closed the pipe."""
    try:
        length, kind = HEADER.unpack(await reader.readexactly(HEADER.size))
        return kind, await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None


def export_frame(request_id: int, signal: Signal, encoding: Encoding, protocol: str, body: bytes) -> bytes:
    name = protocol.encode()
    head = EXPORT_HEAD.pack(request_id, SIGNALS.index(signal), ENCODINGS.index(encoding), len(name))
    return frame(EXPORT, head, name, body)


def read_export(payload: bytes) -> tuple[int, Signal, Encoding, str, bytes]:
    request_id, signal, encoding, name_length = EXPORT_HEAD.unpack_from(payload)
    start = EXPORT_HEAD.size + name_length
    protocol = payload[EXPORT_HEAD.size : start].decode()
    return request_id, SIGNALS[signal], ENCODINGS[encoding], protocol, payload[start:]


def result_frame(request_id: int, status: int, result: ExportResult) -> bytes:
    return frame(RESULT, RESULT_HEAD.pack(request_id, status, result.rejected), result.message.encode())


def read_result(payload: bytes) -> tuple[int, int, ExportResult]:
    request_id, status, rejected = RESULT_HEAD.unpack_from(payload)
    return request_id, status, ExportResult(rejected, payload[RESULT_HEAD.size :].decode("utf-8", "replace"))


TURN_HEAD = struct.Struct("!H")  # length of the conversation id


def turn_frame(conversation_id: str, trajectory_json: bytes) -> bytes:
    cid = conversation_id.encode()[:65535]
    return frame(TURN, TURN_HEAD.pack(len(cid)), cid, trajectory_json)


def read_turn(payload: bytes) -> tuple[bytes, bytes]:
    """(the conversation id as bytes, the run's trajectory JSON)."""
    (length,) = TURN_HEAD.unpack_from(payload)
    start = TURN_HEAD.size + length
    return payload[TURN_HEAD.size : start], payload[start:]


RUN_HEAD = struct.Struct("!BB")  # lengths of the trace id and the span id


def run_frame(trace_id: str, span_id: str, trajectory_json: bytes) -> bytes:
    """A run for the grades page: its ids up front, so the receiving process files it without reading the JSON."""
    ids = trace_id.encode()[:255], span_id.encode()[:255]
    return frame(RUN, RUN_HEAD.pack(*map(len, ids)), *ids, trajectory_json)


def read_run(payload: bytes) -> tuple[str, str, bytes]:
    """(trace id, span id, the trajectory JSON)."""
    trace_length, span_length = RUN_HEAD.unpack_from(payload)
    span_start = RUN_HEAD.size + trace_length
    json_start = span_start + span_length
    return payload[RUN_HEAD.size : span_start].decode(), payload[span_start:json_start].decode(), payload[json_start:]
