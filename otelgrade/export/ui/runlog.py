"""Log lines a person can act on: one INFO line per failing run (rate-limited, with a count of what was left
out) and a one-line summary of what was graded every `ui.log_summary` seconds.

A run's line comes when its grades are complete, its judges' included (`otelgrade.grade.gathering`): at the latest
`judge.timeout` after its code graders answered, saying which judges it still awaits; a judge that fails the run
after that gives the run a second line, marked as the late verdict.

A `RunSink` of the exporter; `tick` is called by the server's loop so a summary comes out when nothing arrives.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from otelgrade.core.results import OUTCOMES, Grade
from otelgrade.core.settings import UiSettings
from otelgrade.grade.gathering import GradedRun

log = logging.getLogger("otelgrade.runs")

WINDOW_SECONDS = 60.0  # `ui.log_failures` is per this window
MAX_RUNS_COUNTED = 100_000  # distinct runs a summary tells apart; past it, it says "at least"
RATIONALE_CHARS = 300  # the page has the full text


class RunLog:
    """Thread-safe: written by the grading thread and judge callbacks, ticked by the event loop."""

    def __init__(
        self, settings: UiSettings, clock: Callable[[], float] = time.monotonic, logger: logging.Logger = log
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.log = logger
        self._lock = threading.Lock()
        now = clock()
        self._window_start = now  # the rate limit's current window
        self._logged_in_window = 0
        self._left_out_in_window = 0
        self._left_out_before = 0  # left out in the previous window, said on the next line that is logged
        self._next_summary = now + settings.log_summary
        self._since = now
        self._outcomes: Counter[str] = Counter()
        self._runs: set[tuple[str, str]] = set()
        self._more_runs = False  # runs past MAX_RUNS_COUNTED were graded since the last summary
        self._failing_runs: set[tuple[str, str]] = set()  # a run's judges answer after its code graders
        self._left_out = 0

    def write(self, grades: Sequence[Grade]) -> None:
        """Count grades for the summary as they come (a run's lines come from `write_run`)."""
        if not self.settings.log_summary:  # nothing would ever read, or clear, the counts
            return
        with self._lock:
            for g in grades:
                key = (g.trace_id, g.span_id)
                self._count(key, g)
                if g.outcome == "fail" and len(self._failing_runs) < MAX_RUNS_COUNTED:
                    self._failing_runs.add(key)

    def write_run(self, run: GradedRun) -> None:
        """The run's line, when some of its grades (or of its late judge grades) failed it."""
        failing = [g for g in run.grades if g.outcome == "fail"]
        if failing:
            with self._lock:
                self._failing_run(failing, run)

    def _count(self, key: tuple[str, str], grade: Grade) -> None:
        if len(self._runs) < MAX_RUNS_COUNTED:
            self._runs.add(key)
        elif key not in self._runs:
            self._more_runs = True
        self._outcomes[grade.outcome] += 1

    def tick(self) -> None:
        """Log the summary when it is due."""
        with self._lock:
            if self.settings.log_summary and self.clock() >= self._next_summary:
                self._summary()

    def flush(self) -> None:
        pass

    def close(self) -> None:
        """Say what was graded since the last summary (shutdown)."""
        with self._lock:
            if self.settings.log_summary:
                self._summary()

    def _failing_run(self, grades: list[Grade], run: GradedRun) -> None:
        now = self.clock()
        if now - self._window_start >= WINDOW_SECONDS:
            self._window_start = now
            self._left_out_before += self._left_out_in_window
            self._logged_in_window = self._left_out_in_window = 0
        if self._logged_in_window >= self.settings.log_failures:
            self._left_out_in_window += 1
            self._left_out += 1
            return
        self._logged_in_window += 1
        line = failing_run_line(grades, self.settings.trace_link(grades[0].trace_id, grades[0].span_id), run)
        if self._left_out_before:
            line += f" ({self._left_out_before} more failing run(s) not logged: ui.log_failures is "
            line += f"{self.settings.log_failures} a minute; the grades page lists them all)"
            self._left_out_before = 0
        self.log.info("%s", line)

    def _summary(self) -> None:
        now = self.clock()
        if self._outcomes:
            counts = ", ".join(f"{self._outcomes[o]} {o}" for o in OUTCOMES)
            runs = f"at least {len(self._runs)}" if self._more_runs else f"{len(self._runs)}"
            line = f"graded {runs} run(s) in the last {now - self._since:.0f}s (grades: {counts})"
            if self._failing_runs:
                line += f"; {len(self._failing_runs)} run(s) failed"
                if self._left_out:
                    line += f", {self._left_out} of them not logged one by one (ui.log_failures)"
            self.log.info("%s", line)
        self._since = now
        self._next_summary = now + self.settings.log_summary
        self._outcomes.clear()
        self._runs.clear()
        self._more_runs = False
        self._failing_runs.clear()
        self._left_out = 0


def failing_run_line(grades: Sequence[Grade], trace_link: str | None = None, run: GradedRun | None = None) -> str:
    """One line for one run's failing grades: where the run is, each failing grader's reason, and (`run`) the
    judges it had not heard from by the deadline, or that these are such a judge's late verdicts."""
    first = grades[0]
    what = "conversation" if first.level == "conversation" else "run"
    where = [f"trace_id={first.trace_id}", f"span_id={first.span_id}"]
    if first.conversation_id:
        where.append(f"conversation_id={first.conversation_id}")
        if first.conversation_scope:
            where.append(f"conversation_scope={first.conversation_scope}")
    if first.service_name:
        where.append(f"service={first.service_name}")
    if first.agent_name:
        where.append(f"agent={first.agent_name}")
    reasons = "; ".join(
        f"suite={g.suite} grader={g.grader}: {_one_line(g.rationale) or '(no rationale)'}" for g in grades
    )
    said = f"{what} failed (late judge verdict)" if run is not None and run.part > 1 else f"{what} failed"
    line = f"{said}: {' '.join(where)} | {reasons}"
    if run is not None and run.waiting:
        line += f" | no answer yet from {', '.join(run.waiting)} (judge.timeout)"
    return printable(f"{line} | trace: {trace_link}" if trace_link else line)


def printable(text: str) -> str:
    """`text` with control characters and line breaks written as escapes (`\\n`, `\\x1b`, `\\u2028`): names and
    messages that senders chose cannot start a log line of their own or drive the terminal."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= RATIONALE_CHARS else flat[: RATIONALE_CHARS - 1] + "…"
