"""Conversation turns passed between grading workers, kept until the worker holding the conversation wrote them down.

A turn is rebuilt by the worker owning its trace and held by the worker owning its conversation. The first keeps
the turn's trace unmarked in its spool (`Outbox`) until the holder says it holds the turn (`TURN_HELD`, sent once
its journal has the turn), so a kill -9 of either worker, or of the receiving process, before that replays the
trace and passes the turn on again. The receiving process keeps every turn it passed to a worker until that worker
says so (`Relay`): a turn for a worker that is down, or that died before holding it, is sent again when the worker
is ready. A turn held twice replaces itself (a conversation keys its turns by trace and span).
"""

from __future__ import annotations

import logging
import struct
import threading
from collections import Counter, OrderedDict

from otelgrade.service.workers import frames

log = logging.getLogger("otelgrade")

ORIGIN = struct.Struct("!H")  # the index of the worker that rebuilt the turn
IDS = frames.TURN_IDS  # a turn's trace id and span id, as hex
UNACKNOWLEDGED_MAX = 100_000  # turns the receiving process keeps for one worker before it drops the oldest

TurnKey = tuple[int, bytes]  # (origin worker, trace id and span id)


def ids_of(trace_id: str, span_id: str) -> bytes:
    return (trace_id + span_id).encode()[:IDS].ljust(IDS, b"0")


def hold_frame(origin: int, ids: bytes, trajectory_json: bytes) -> bytes:
    """Receiving process -> the worker owning the conversation: hold this turn."""
    return frames.frame(frames.HOLD_TURN, ORIGIN.pack(origin), ids, trajectory_json)


def read_hold(payload: bytes) -> tuple[TurnKey, bytes]:
    (origin,) = ORIGIN.unpack_from(payload)
    start = ORIGIN.size + IDS
    return (origin, payload[ORIGIN.size : start]), payload[start:]


def held_frame(key: TurnKey) -> bytes:
    """The holder -> the receiving process: the turn is written down."""
    origin, ids = key
    return frames.frame(frames.TURN_HELD, ORIGIN.pack(origin), ids)


def read_held(payload: bytes) -> TurnKey:
    (origin,) = ORIGIN.unpack_from(payload)
    return origin, payload[ORIGIN.size : ORIGIN.size + IDS]


def passed_frame(ids: bytes) -> bytes:
    """The receiving process -> the worker that rebuilt the turn: its holder has it."""
    return frames.frame(frames.TURN_PASSED, ids)


class Outbox:
    """In the worker that rebuilt turns: the traces whose turns are not yet held, which its spool leaves unmarked.
    Used from the grading thread (sent) and the event loop (held)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: set[bytes] = set()
        self._traces: Counter[str] = Counter()

    def sent(self, ids: bytes) -> None:
        with self._lock:
            if ids not in self._turns:
                self._turns.add(ids)
                self._traces[ids[:32].decode()] += 1

    def held(self, ids: bytes) -> None:
        with self._lock:
            if ids in self._turns:
                self._turns.discard(ids)
                trace_id = ids[:32].decode()
                self._traces[trace_id] -= 1
                if self._traces[trace_id] <= 0:
                    del self._traces[trace_id]

    def unwritten(self) -> set[str]:
        """The trace ids not to mark graded yet."""
        with self._lock:
            return set(self._traces)


class Relay:
    """In the receiving process: per worker, the turns passed to it that it has not said it holds, oldest first."""

    def __init__(self, workers: int, most: int = UNACKNOWLEDGED_MAX) -> None:
        self.most = most
        self._waiting: list[OrderedDict[TurnKey, bytes]] = [OrderedDict() for _ in range(workers)]

    def keep(self, worker: int, key: TurnKey, data: bytes) -> int:
        """Keep a turn's frame for `worker` until it holds the turn; the number of older ones dropped for room."""
        waiting = self._waiting[worker]
        waiting[key] = data
        dropped = 0
        while len(waiting) > self.most:
            waiting.popitem(last=False)
            dropped += 1
        if dropped:
            log.error(
                "grading worker %d has not held %d conversation turn(s) passed to it; dropped the %d oldest "
                '(otelgrade_log_records_dropped_total{reason="worker_down"})',
                worker,
                len(waiting),
                dropped,
            )
        return dropped

    def held(self, worker: int, key: TurnKey) -> None:
        self._waiting[worker].pop(key, None)

    def waiting(self, worker: int) -> list[bytes]:
        """The frames to send `worker` again (it has started again, or was down when they came)."""
        return list(self._waiting[worker].values())
