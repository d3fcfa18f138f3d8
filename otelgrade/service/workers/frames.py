"""The pipe between the receiving process and one grading worker: frames of a kind byte and a payload, each
preceded by its length. Requests go down as the bytes that arrived (or the part of them the worker owns);
answers, metrics, and the runs and grades the grades page shows come back up."""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import struct
from collections.abc import AsyncIterator, Sequence

import orjson

from otelgrade.core.results import Grade
from otelgrade.intake.receivers.base import Encoding, ExportResult, Signal

HEADER = struct.Struct("!IB")  # payload length, kind

# Receiving process -> worker.
EXPORT = 1  # a request to keep: EXPORT_HEAD, the protocol's name, the body
SCRAPE = 2  # the worker's metrics, please: request id
HOLD_TURN = 3  # a run that is a turn of a conversation this worker owns (`handoff.hold_frame`)
FINISH = 4  # shutting down: every worker has graded what it held, so no more turns come; finish conversations
PING = 5  # are you there? (the heartbeat): answered at once with PONG
RUNS_OF = 6  # the runs of one trace the grades page shows, please: request id, trace id
TURN_PASSED = 7  # a turn this worker rebuilt is held by the worker owning its conversation (`handoff`)
# Worker -> receiving process.
RESULT = 11  # a request's answer: RESULT_HEAD, the message
METRICS = 12  # request id, the worker's metrics (`merge.snapshot`)
RUN = 13  # a run about to be graded, for the grades page's list: RUN_HEAD, trace id, span id (the worker holds it)
GRADES = 14  # a batch of grades (`grades_frame`: a JSON list of each grade's fields in order)
READY = 15  # replay done, requests are taken
BUSY = 16  # one byte: 1 while the worker wants senders to back off, 0 once it does not
CONVERSATION = 17  # a conversation about to be graded (its trajectory JSON, turns included)
TURN = 19  # a run that is a turn of a conversation: length-prefixed conversation key, its ids, trajectory JSON
DRAINED = 20  # shutting down: what the worker held is graded (its turns sent up before this); it awaits FINISH
PONG = 21  # the heartbeat's answer
RUNS = 22  # request id, the trajectories of one trace's runs the worker holds (a JSON list)
TURN_HELD = 23  # a turn passed to this worker is held, written in its journal (`handoff`)
UNMATCHED = 18  # what arrived and was not graded since the worker started (`UnmatchedRuns` as JSON), when it changes

EXPORT_HEAD = struct.Struct("!IBBB")  # request id, signal, encoding, length of the protocol's name
RESULT_HEAD = struct.Struct("!IBI")  # request id, status, items rejected
ID = struct.Struct("!I")
OK, INVALID, OVERLOADED = 0, 1, 2  # RESULT statuses
SIGNALS: tuple[Signal, Signal] = ("traces", "logs")
ENCODINGS: tuple[Encoding, Encoding] = ("protobuf", "json")


def frame(kind: int, *parts: bytes) -> bytes:
    """One frame, its parts copied once (a request's body can be megabytes)."""
    return b"".join((HEADER.pack(sum(map(len, parts)), kind), *parts))


READ_BYTES = 1 << 20  # the most read from a pipe at once


async def read_frames(reader: asyncio.StreamReader) -> AsyncIterator[list[tuple[int, bytes]]]:
    """Every frame that arrives, as (kind, payload), in lists of those that arrived together (a wait per frame cost
    more than most frames), until the other side closes the pipe."""
    buffer = bytearray()
    while data := await reader.read(READ_BYTES):
        held: bytes | bytearray = data
        if buffer:  # the rest of a frame that began in an earlier read
            buffer += data
            held = buffer
        got, start = [], 0
        while len(held) - start >= HEADER.size:
            length, kind = HEADER.unpack_from(held, start)
            end = start + HEADER.size + length
            if end > len(held):
                break
            got.append((kind, bytes(held[start + HEADER.size : end])))  # from bytes read whole: one copy
            start = end
        if held is buffer:
            del buffer[:start]
        else:
            buffer += data[start:]
        yield got


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


_GRADE_ROW = operator.attrgetter(*(f.name for f in dataclasses.fields(Grade)))


def grades_frame(grades: Sequence[Grade]) -> bytes:
    """A batch of grades as rows of their fields in declaration order, not objects by name: the receiving process
    reads one batch per graded run, and `Grade(*row)` costs a seventh of `Grade(**record)` (3 grades: 45 -> 7 µs,
    parsing included). Values JSON cannot hold (in `metadata`) are sent as their text."""
    return frame(GRADES, orjson.dumps([_GRADE_ROW(g) for g in grades], default=str))


def read_grades(payload: bytes) -> list[Grade]:
    return [Grade(*row) for row in orjson.loads(payload)]


TURN_HEAD = struct.Struct("!H")  # length of the conversation id


TURN_IDS = 48  # the run's trace id and span id, as hex


def turn_frame(conversation_id: str, ids: bytes, trajectory_json: bytes) -> bytes:
    cid = conversation_id.encode()[:65535]
    return frame(TURN, TURN_HEAD.pack(len(cid)), cid, ids, trajectory_json)


def read_turn(payload: bytes) -> tuple[bytes, bytes, bytes]:
    """(the conversation key as bytes, the run's trace and span ids, the run's trajectory JSON)."""
    (length,) = TURN_HEAD.unpack_from(payload)
    start = TURN_HEAD.size + length
    return payload[TURN_HEAD.size : start], payload[start : start + TURN_IDS], payload[start + TURN_IDS :]


RUN_HEAD = struct.Struct("!BB")  # lengths of the trace id and the span id


def run_frame(trace_id: str, span_id: str) -> bytes:
    """A run for the grades page's list: its ids (the worker keeps its trajectory until the run's page asks)."""
    ids = trace_id.encode()[:255], span_id.encode()[:255]
    return frame(RUN, RUN_HEAD.pack(*map(len, ids)), *ids)


def read_run(payload: bytes) -> tuple[str, str]:
    """(trace id, span id)."""
    trace_length, span_length = RUN_HEAD.unpack_from(payload)
    span_start = RUN_HEAD.size + trace_length
    return payload[RUN_HEAD.size : span_start].decode(), payload[span_start : span_start + span_length].decode()
