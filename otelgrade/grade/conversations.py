"""Conversations: the runs that share a conversation id, merged into one trajectory once the conversation is complete.

`merge` makes the `Conversation` a `level: conversation` suite grades. `Conversations` holds the open ones live:
each turn's trajectory as zlib-compressed JSON (never spans; a turn repeats its conversation's history, so it
compresses about 3.5×), one deadline heap for all of them (one entry per open conversation, moved on when it had
newer runs). Each turn counts its compressed JSON plus what holding it costs (`TURN_OVERHEAD`, and
`CONVERSATION_OVERHEAD` per conversation) against `max_bytes`. A conversation completes `settle` after its last
run, at once on a run carrying the end marker (`REOPEN_GAP` after its last grade when it is ended again that soon),
or when the caps (count, bytes) need its room (`evicted`: graded as it stands), or once it holds
`max_conversation_turns` turns, `max_conversation_bytes` of their JSON or a quarter of `max_bytes` (`capped`: what
grading it costs is bounded, and one conversation cannot make the caps evict the others; it is then forgotten, so
its later turns start a new one). A completed conversation is kept `keep_completed` so a later run re-opens it with
its earlier turns; it is then graded again, as the next revision of its grades. One an end marker completed is kept
merged as graded (the last `MERGED_KEPT`, counted against `max_bytes`), so the grade after a re-open merges only the
turns that came since.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice, pairwise
from pathlib import Path
from typing import Literal

from otelgrade.core.settings import ConversationSettings
from otelgrade.core.trajectory import PARTS, Conversation, Handoff, LLMCall, ToolCall, Trajectory, content_text

log = logging.getLogger(__name__)

Completion = Literal["settled", "ended", "evicted", "shutdown", "capped"]
JOURNAL_SLACK = 16 * 1024**2  # bytes a journal may hold beyond twice what is held before it is rewritten
COMPLETIONS: tuple[Completion, ...] = ("settled", "ended", "evicted", "shutdown", "capped")
# Per call of `due`, on the grading thread: conversations merged for grading, and completed ones forgotten (a
# journal line each). A burst that settles together is spread over the next calls, runs graded in between.
SETTLE_BATCH = 32
# A conversation ended again within this many seconds of its last grade (an end marker on every turn, each turn
# re-opening it) is graded once the gap is over, with every turn that came meanwhile: a storm of markers costs a
# grade per gap, not per turn (each grade reads every turn, so one per turn would grow with the square of them).
REOPEN_GAP = 1.0
FORGET_BATCH = 256
# zlib level 1 on the captured turns (4.0 kB of JSON each): 3.5× smaller, ~23 µs to compress, ~8 µs to
# decompress; level 6 makes it 3.8× for ~40% more CPU.
COMPRESSION_LEVEL = 1
# What holding costs beyond the turns' compressed JSON, measured as RSS growth with 4 kB turns (bench/conversations.py;
# CPython 3.11, 64-bit). A turn: its key (two id strings in a tuple), its dict slot and its bytes object (with 1, 3
# and 5 turns a conversation). A conversation: its record, its turn dict, its entry in the open/completed order and
# its deadline (560 bytes), plus what the conversations graded early to make room leave behind while others keep
# coming (their deadlines until the heap is rebuilt, freed memory the allocator keeps; 670 bytes per conversation
# held, the same after 3 and 15 times the cap has passed through).
TURN_OVERHEAD = 240
CONVERSATION_OVERHEAD = 1230
# A conversation ended by a marker is kept merged as it was graded, so that when turns re-open it its next grade
# reads only them (an end marker on every turn costs per turn what a turn costs, not a merge of every turn again).
# At most this many are kept, the last graded; each counts against `max_bytes` as MERGED_FACTOR times its turns'
# JSON (the captured turns parsed take 5.5 times their JSON, their merged calls and messages 1.0 more), and they are
# the first given up when room is needed.
MERGED_KEPT = 16
MERGED_FACTOR = 7
# One conversation holds at most this share of `max_bytes` (then it is `capped`), whatever `max_conversation_bytes`
# says: with a small `max_bytes` one conversation could otherwise fill it and make the caps evict all the others.
CONVERSATION_SHARE = 0.25


_NOTHING = Conversation(trace_id="", span_id="")  # what a conversation merged anew starts from


def merge(
    runs: Sequence[Trajectory], conversation_id: str | None = None, onto: Conversation | None = None
) -> Conversation:
    """The conversation of `runs` (its turns, in any order) as one trajectory: turns ordered by start time, steps
    numbered across them, each turn's new messages appended (a turn that re-sends the history adds only what
    follows its last user message), the parts any turn lacks lacking, and why (each turn's disagreements).

    `onto`: the same conversation merged before, `runs` the turns it has gained since. When they all start after
    its last turn, its calls and messages are kept and only theirs are added (what a re-opened conversation's next
    grade costs is its new turns, not all of them again); else everything is merged anew."""
    turns = sorted(runs, key=_turn_order)
    if onto is not None and onto.runs and turns and _turn_order(turns[0]) < _turn_order(onto.runs[-1]):
        return merge([*onto.runs, *turns], conversation_id)
    base = onto if onto is not None else _NOTHING
    earlier = base.runs
    llm_calls: list[LLMCall] = list(base.llm_calls)
    tool_calls: list[ToolCall] = list(base.tool_calls)
    handoffs: list[Handoff] = list(base.handoffs)
    messages: list[dict[str, object]] = list(base.messages)
    attributes: dict[str, object] = dict(base.attributes)
    offset = base.steps
    for number, run in enumerate(turns, len(earlier)):
        llm_calls.extend(c.model_copy(update={"step": c.step + offset}) for c in run.llm_calls)
        tool_calls.extend(c.model_copy(update={"step": c.step + offset}) for c in run.tool_calls)
        handoffs.extend(h.model_copy(update={"step": h.step + offset}) for h in run.handoffs)
        messages.extend(run.messages if number == 0 else _new_messages(run.messages))
        attributes.update(run.attributes)
        offset += run.steps
    new, turns = turns, [*earlier, *turns]
    if not turns:
        raise ValueError("a conversation has at least one run")
    first, last = turns[0], turns[-1]
    failed = next((n for n, r in enumerate(new, len(earlier) + 1) if r.status == "error"), None)
    lacks = {*base.lacks, *(part for r in new for part in r.lacks)}
    # built from parts already validated (each turn's): validating them again would read every turn at each grade
    return Conversation.model_construct(
        trace_id=last.trace_id,
        span_id=last.span_id,
        service_name=last.service_name or first.service_name,
        agent_name=first.agent_name,
        environment=last.environment or first.environment,
        source=first.source,
        input=first.input,
        output=last.output,
        status="error" if base.status == "error" or failed is not None else "ok",
        error=base.error if base.status == "error" else _turn_error(failed, turns),
        start_time=first.start_time,
        end_time=last.end_time,
        duration_s=_seconds_between(first, last),
        llm_calls=llm_calls,
        tool_calls=tool_calls,
        messages=messages,
        steps=offset,
        attributes=attributes,
        ground_truth=next((r.ground_truth for r in reversed(new) if r.ground_truth is not None), base.ground_truth),
        agents=list(dict.fromkeys([*base.agents, *(a for r in new for a in (r.agents or [r.agent_name or ""]) if a)])),
        handoffs=handoffs,
        lacks=[p for p in PARTS if p in lacks],
        unread=[*base.unread, *(u for r in new for u in r.unread)],
        disagreements=[*base.disagreements, *(d for r in new for d in r.disagreements)],
        conversation_id=conversation_id or last.conversation_id,
        conversation_scope=last.conversation_scope,
        ends_conversation=base.ends_conversation or any(r.ends_conversation for r in new),
        turns=len(turns),
        runs=turns,
    )


def _turn_error(number: int | None, turns: Sequence[Trajectory]) -> str | None:
    """`turn N: its error`, for the first turn that failed (`number`, from 1), None when none did."""
    return None if number is None else f"turn {number}: {turns[number - 1].error or 'error'}"


def _turn_order(run: Trajectory) -> tuple[str, str, str]:
    return (run.start_time or "", run.trace_id, run.span_id)


def _new_messages(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """What a later turn adds: from its last user message with text on (the history before it was sent again);
    all but the system prompt when it has none."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user" and content_text(messages[index].get("content")):
            return messages[index:]
    return [m for m in messages if m.get("role") != "system"]


def _seconds_between(first: Trajectory, last: Trajectory) -> float | None:
    from datetime import datetime

    if not first.start_time or not last.end_time:
        return None
    start = datetime.fromisoformat(first.start_time.replace("Z", "+00:00"))
    end = datetime.fromisoformat(last.end_time.replace("Z", "+00:00"))
    return max(0.0, (end - start).total_seconds())


@dataclass(slots=True)
class Held:
    """One conversation's turns, each as its trajectory's JSON compressed, keyed by (trace id, span id) so a run
    graded again after late spans replaces its earlier self. `conversation_id` is its key (`conversation_key`: the
    application's id within its scope)."""

    conversation_id: str
    turns: dict[tuple[str, str], bytes] = field(default_factory=dict)
    nbytes: int = CONVERSATION_OVERHEAD  # what it holds, bookkeeping included
    last_run: float = 0.0  # when its latest run arrived (the clock of `Conversations`)
    completed_at: float | None = None  # None while open
    raw: int = 0  # its turns' JSON, uncompressed: what merging them for grading reads
    reopened: int = 0  # how often a run came after it was complete
    last_completed: float | None = None  # when it last completed (kept while it is open again)
    end_due: float | None = None  # re-opened and ended again soon after: when it completes (`REOPEN_GAP`)
    merged: Conversation | None = None  # as last graded, while kept (`MERGED_KEPT`): its first `merged_turns` turns
    merged_turns: int = 0
    merged_cost: int = 0  # what keeping `merged` costs, within `nbytes`

    def put(self, key: tuple[str, str], body: bytes) -> int:
        """Hold a turn (its trajectory's JSON, compressed here) under its (trace id, span id); the change in bytes
        held."""
        before = self.turns.get(key)
        self.raw += len(body)
        body = self.turns[key] = zlib.compress(body, COMPRESSION_LEVEL)
        # a turn graded again replaces itself (its JSON counted twice in `raw`, which only errs on the safe side),
        # and what was merged with its earlier self is merged anew
        change = len(body) - len(before) if before is not None else len(body) + TURN_OVERHEAD
        self.nbytes += change
        return change + (self.keep(None) if before is not None else 0)

    def keep(self, merged: Conversation | None) -> int:
        """Keep `merged` (its turns merged, as just graded; None: keep none); the change in bytes held."""
        cost = MERGED_FACTOR * self.raw if merged is not None else 0
        change, self.merged_cost = cost - self.merged_cost, cost
        self.merged, self.merged_turns = merged, len(self.turns) if merged is not None else 0
        self.nbytes += change
        return change

    def turns_json(self) -> Iterator[tuple[tuple[str, str], bytes]]:
        """Each held turn's key and its trajectory's JSON."""
        for key, body in self.turns.items():
            yield key, zlib.decompress(body)

    def conversation(self) -> Conversation:
        return merge([Trajectory.model_validate_json(body) for _, body in self.turns_json()])

    def readable(self) -> tuple[Conversation | None, int]:
        """The conversation of the turns that read as trajectories (None if none does), and how many did not (a
        journal line of JSON that is not a trajectory: damage on disk, or a journal of another version). With a
        merged conversation kept, only the turns held since are read and added to it."""
        start = self.merged_turns if self.merged is not None else 0
        runs: list[Trajectory] = []
        for key, body in islice(self.turns.items(), start, None):
            try:
                runs.append(Trajectory.model_validate_json(zlib.decompress(body)))
            except ValueError as exc:
                log.error(
                    "conversation %s: a journalled turn (trace %s) is not a trajectory, skipped: %s",
                    self.conversation_id[:200],
                    key[0][:64],
                    str(exc)[:200],
                )
        damaged = len(self.turns) - start - len(runs)
        return (merge(runs, onto=self.merged) if runs else self.merged), damaged


class Journal:
    """With the spool on: every held turn and every change of state, appended to one file in the spool directory
    (`conversations.journal`), so a restart holds again every conversation's earlier turns. Rewritten whole when
    it is more than twice what is held. A line cut short by a crash is skipped when read back."""

    NAME = "conversations.journal"

    def __init__(self, directory: str | Path, fsync: bool = True) -> None:
        self.path = Path(directory) / self.NAME
        self.fsync = fsync
        self._file = self.path.open("ab")
        self.written = self.path.stat().st_size

    def turn(self, cid: str, key: tuple[str, str], body: bytes) -> None:
        self._write(_turn_line(cid, key, body))

    def state(self, cid: str, what: Literal["done", "forget"]) -> None:
        self._write(json.dumps({"c": cid, what: True}).encode() + b"\n")

    def _write(self, line: bytes) -> None:
        try:
            self._file.write(line)
            self._file.flush()
            if self.fsync:
                os.fsync(self._file.fileno())
            self.written += len(line)
        except OSError as exc:  # the conversation is still held; only a restart would lose it
            log.error("cannot write the conversation journal %s: %s", self.path, exc)

    def read(self) -> Iterator[dict[str, object]]:
        with self.path.open("rb") as file:
            for number, line in enumerate(file, 1):
                try:
                    record = json.loads(line)
                except ValueError:
                    log.warning("%s:%d: a record cut short, skipped", self.path, number)
                    continue
                if isinstance(record, dict) and isinstance(record.get("c"), str):
                    yield record

    def rewrite(self, held: Sequence[Held]) -> None:
        """The journal as just what is held now."""
        fresh = self.path.with_suffix(".tmp")
        with fresh.open("wb") as file:
            for conversation in held:
                for key, body in conversation.turns_json():
                    file.write(_turn_line(conversation.conversation_id, key, body))
                if conversation.completed_at is not None:
                    file.write(json.dumps({"c": conversation.conversation_id, "done": True}).encode() + b"\n")
            file.flush()
            os.fsync(file.fileno())
        self._file.close()
        os.replace(fresh, self.path)
        self._file = self.path.open("ab")
        self.written = self.path.stat().st_size

    def close(self) -> None:
        self._file.close()


def _turn_line(cid: str, key: tuple[str, str], body: bytes) -> bytes:
    """`{"c": id, "t": trace id, "s": span id, "r": the trajectory}`, the trajectory's JSON as it is (uncompressed:
    the journal's lines are the same whether or not what is held is compressed)."""
    return json.dumps({"c": cid, "t": key[0], "s": key[1]})[:-1].encode() + b', "r": ' + body + b"}\n"


@dataclass(frozen=True, slots=True)
class Completed:
    """A conversation ready to grade, why, and whether it was complete before (a re-open)."""

    conversation: Conversation
    reason: Completion
    reopened: bool


class Conversations:
    """The conversations being held, open and recently completed. Not thread-safe: one grading thread owns it."""

    def __init__(self, settings: ConversationSettings, clock: Callable[[], float]) -> None:
        self.settings = settings
        self.clock = clock
        self.open: OrderedDict[str, Held] = OrderedDict()  # least recently active first
        self.completed: OrderedDict[str, Held] = OrderedDict()  # earliest completed first
        self.nbytes = 0
        self._deadlines: list[tuple[float, str]] = []  # (settle deadline, id); stale entries are skipped
        self.reopened_total = 0
        self.journal: Journal | None = None
        self.damaged = 0  # journalled turns that were not trajectories, skipped (`otelgrade_spool_damage_total`)
        self._merged: OrderedDict[str, Held] = OrderedDict()  # those kept merged (`MERGED_KEPT`), last graded last

    def restore(self, journal: Journal) -> int:
        """Hold again what the journal kept (open conversations settle `settle` from now) and keep writing to it;
        the number of conversations held again."""
        now = self.clock()
        for record in journal.read():
            cid = str(record["c"])
            held = self.open.pop(cid, None) or self.completed.pop(cid, None)
            if held is None:
                held = Held(cid)
                self.nbytes += held.nbytes
            if record.get("forget"):
                self.nbytes -= held.nbytes
                continue
            if record.get("done"):
                held.completed_at = now
                self.completed[cid] = held
                continue
            if held.completed_at is not None:
                held.completed_at, held.reopened = None, held.reopened + 1
            self.nbytes += held.put(
                (str(record.get("t")), str(record.get("s"))),
                json.dumps(record.get("r"), separators=(",", ":"), ensure_ascii=False).encode(),
            )
            held.last_run = now
            self.open[cid] = held
        for cid in self.open:
            self._push_deadline(now + self.settings.settle, cid)
        self.journal = journal
        journal.rewrite([*self.completed.values(), *self.open.values()])
        return len(self)

    def __len__(self) -> int:
        return len(self.open) + len(self.completed)

    def add(self, run: Trajectory) -> list[Completed]:
        """Hold a request run that names a conversation; what completes because of it (its own conversation when
        the run ends it, the oldest open ones when the caps need room)."""
        cid = run.conversation_key
        if cid is None:
            return []
        now = self.clock()
        held = self.open.pop(cid, None)
        was_open = held is not None
        reopened = False
        if held is None:
            held = self.completed.pop(cid, None)
            if held is not None:
                reopened = True
                held.reopened += 1
                held.completed_at = None
                self.reopened_total += 1
            else:
                held = Held(cid)
                self.nbytes += held.nbytes
        self.open[cid] = held
        body = run.model_dump_json().encode()
        self.nbytes += held.put((run.trace_id, run.span_id), body)
        held.last_run = now
        if self.journal is not None:
            self.journal.turn(cid, (run.trace_id, run.span_id), body)
        done: list[Completed | None] = []
        settings = self.settings
        if (
            len(held.turns) >= settings.max_conversation_turns
            or held.raw > settings.max_conversation_bytes
            or held.nbytes - held.merged_cost > settings.max_bytes * CONVERSATION_SHARE
        ):
            done.append(self._complete(held, "capped", reopened or held.reopened > 0))
            self._forget(cid)
        elif run.ends_conversation and held.last_completed is not None and now < held.last_completed + REOPEN_GAP:
            # ended again right after it was graded (an end marker on every turn): graded once the gap is over,
            # with every turn that came meanwhile, not once per turn
            if held.end_due is None:
                held.end_due = held.last_completed + REOPEN_GAP
                heapq.heappush(self._deadlines, (held.end_due, cid))
        elif run.ends_conversation:
            done.append(self._complete(held, "ended", reopened or held.reopened > 0))
        elif not was_open:  # an open one has its entry already: `due` moves it on to its latest run
            self._push_deadline(now + self.settings.settle, cid)
        done.extend(self._make_room())
        return [c for c in done if c is not None]

    def due(self, limit: int = SETTLE_BATCH) -> list[Completed]:
        """Up to `limit` of the open conversations whose last run is `settle` old, earliest deadline first (the
        others stay due: `next_deadline` has passed until the calls that follow take them); completed ones past
        `keep_completed` forgotten, a bounded number per call too."""
        now = self.clock()
        done: list[Completed | None] = []
        while self._deadlines and self._deadlines[0][0] <= now and len(done) < limit:
            _, cid = heapq.heappop(self._deadlines)
            held = self.open.get(cid)
            if held is None:
                continue  # completed before its deadline (an end marker, the caps)
            if held.end_due is not None and held.end_due <= now:
                done.append(self._complete(held, "ended", held.reopened > 0))
            elif held.last_run + self.settings.settle <= now:
                done.append(self._complete(held, "settled", held.reopened > 0))
            else:
                heapq.heappush(self._deadlines, (self._deadline(held), cid))
        keep = self.settings.keep_completed
        for _ in range(FORGET_BATCH):
            if not self.completed:
                break
            cid, held = next(iter(self.completed.items()))
            if held.completed_at is None or held.completed_at + keep > now:
                break
            self._forget(cid)
        return [c for c in done if c is not None]

    def _push_deadline(self, deadline: float, cid: str) -> None:
        """One entry per open conversation, plus those of conversations completed before their deadline: when these
        outnumber the open ones, the heap is built again from the open ones (so it is bounded by the caps)."""
        heapq.heappush(self._deadlines, (deadline, cid))
        if len(self._deadlines) > 2 * len(self.open) + 1024:
            self._deadlines = [(self._deadline(held), c) for c, held in self.open.items()]
            heapq.heapify(self._deadlines)

    def _deadline(self, held: Held) -> float:
        """When an open conversation completes if no run comes: `settle` after its last, or its end when due."""
        settled = held.last_run + self.settings.settle
        return settled if held.end_due is None else min(held.end_due, settled)

    def next_deadline(self) -> float | None:
        """When the next open conversation may settle (None: none open)."""
        return self._deadlines[0][0] if self._deadlines else None

    def drain(self) -> list[Completed]:
        """Every open conversation, complete now (shutdown without a spool to keep them)."""
        done = [self._complete(held, "shutdown", held.reopened > 0) for held in list(self.open.values())]
        return [c for c in done if c is not None]

    def _complete(self, held: Held, reason: Completion, reopened: bool) -> Completed | None:
        """Complete a conversation; what to grade (None when none of its turns reads as a trajectory)."""
        self.open.pop(held.conversation_id, None)
        held.completed_at = held.last_completed = self.clock()
        held.end_due = None
        self.completed[held.conversation_id] = held
        if self.journal is not None:
            self.journal.state(held.conversation_id, "done")
        conversation, damaged = held.readable()
        self.damaged += damaged
        self._keep_merged(held, conversation if reason == "ended" else None)
        return None if conversation is None else Completed(conversation, reason, reopened)

    def _keep_merged(self, held: Held, conversation: Conversation | None) -> None:
        """Keep a conversation an end marker completed merged as graded (the turns that re-open it are then all its
        next grade merges), the last `MERGED_KEPT` of them; drop what another completion leaves."""
        self.nbytes += held.keep(conversation)
        self._merged.pop(held.conversation_id, None)
        if conversation is not None:
            self._merged[held.conversation_id] = held
        while len(self._merged) > MERGED_KEPT:
            self.nbytes += self._merged.popitem(last=False)[1].keep(None)

    def _forget(self, cid: str) -> None:
        held = self.completed.pop(cid)
        self._merged.pop(cid, None)
        self.nbytes -= held.nbytes
        if self.journal is not None:
            self.journal.state(cid, "forget")
            if self.journal.written > 2 * self.nbytes + JOURNAL_SLACK:
                self.journal.rewrite([*self.completed.values(), *self.open.values()])

    def _make_room(self) -> list[Completed]:
        """Within the caps: give up the conversations kept merged, forget the earliest completed ones, then grade
        the least recently active open ones as they stand."""
        cap, max_bytes = self.settings.max_conversations, self.settings.max_bytes
        while self._merged and self.nbytes > max_bytes:
            self.nbytes += self._merged.popitem(last=False)[1].keep(None)
        while self.completed and (len(self) > cap or self.nbytes > max_bytes):
            self._forget(next(iter(self.completed)))
        done: list[Completed | None] = []
        while len(self.open) > 1 and (len(self.open) > cap or self.nbytes > max_bytes):
            held = next(iter(self.open.values()))
            done.append(self._complete(held, "evicted", held.reopened > 0))
            self._forget(held.conversation_id)
        return [c for c in done if c is not None]


def whole(chosen: Sequence[Trajectory], every: Sequence[Trajectory]) -> tuple[list[Trajectory], int]:
    """`chosen` (runs labelled, or within a time window), with every other run of `every` that is a turn of a
    conversation one of them is a turn of, so that each conversation is graded whole; and how many were added."""
    keys = {key for run in chosen if (key := run.conversation_key) is not None}
    if not keys:
        return list(chosen), 0
    taken = {(run.trace_id, run.span_id) for run in chosen}
    added = [r for r in every if r.conversation_key in keys and (r.trace_id, r.span_id) not in taken]
    return [*chosen, *added], len(added)


def revision_of(runs: Sequence[Trajectory], settle: float) -> int:
    """The revision a live service grades a conversation of these turns as, at its last turn: 1, plus one for each
    time it completed before a later turn re-opened it (an end marker, or `settle` without a turn)."""
    turns = sorted(runs, key=_turn_order)
    revision = 1
    for before, after in pairwise(turns):
        gap = _gap(before.end_time, after.start_time)
        if before.ends_conversation or (gap is not None and gap >= settle):
            revision += 1
    return revision


def _gap(end: str | None, start: str | None) -> float | None:
    from datetime import datetime

    if not end or not start:
        return None
    return (
        datetime.fromisoformat(start.replace("Z", "+00:00")) - datetime.fromisoformat(end.replace("Z", "+00:00"))
    ).total_seconds()
