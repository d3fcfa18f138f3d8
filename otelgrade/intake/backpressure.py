"""Back-pressure: when the receivers ask senders to retry later, and handing memory back after a burst.

Nothing received is silently dropped: when grading falls behind by `assembly.max_traces` completed traces, or the
bytes held (runs waiting to complete or to be graded, graded ones kept for late spans) reach
`limits.max_bytes_held`, the receivers answer 503 (Retry-After) / UNAVAILABLE, which OTLP exporters retry with
backoff. The runs are still in the senders' queues meanwhile, and grading catches up. Once what a burst held is
graded, the freed memory is handed back to the OS.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging

from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import AssemblySettings, LimitsSettings
from otelgrade.intake.assemble import Assembler

log = logging.getLogger("otelgrade")


class Backpressure:
    """What is held and queued for grading, and whether senders should back off. Counted on the event loop."""

    def __init__(
        self, assembler: Assembler, metrics: Metrics, assembly: AssemblySettings, limits: LimitsSettings
    ) -> None:
        self.assembler, self.metrics = assembler, metrics
        self.max_traces, self.max_bytes_held = assembly.max_traces, limits.max_bytes_held
        self.backlog = 0  # completed traces queued for grading
        self.backlog_bytes = 0.0  # and the bytes received for them
        self._was_busy = False
        self._held_peak = 0.0  # the most bytes held since memory was last handed back to the OS

    def configure(self, assembly: AssemblySettings, limits: LimitsSettings) -> None:
        """The limits of a reloaded config."""
        self.max_traces, self.max_bytes_held = assembly.max_traces, limits.max_bytes_held

    def bytes_held(self) -> float:
        """Bytes held for runs waiting to complete or to be graded, and for graded ones kept for late spans."""
        return self.assembler.bytes_in_flight + self.assembler.bytes_kept + self.backlog_bytes

    def overloaded(self) -> bool:
        """Whether senders should back off: grading is `assembly.max_traces` traces behind, or the bytes held
        reach `limits.max_bytes_held`."""
        return self.backlog >= self.max_traces or self.bytes_held() >= self.max_bytes_held

    def queued(self, count: int, nbytes: float) -> None:
        """Completed traces handed to grading."""
        self.backlog += count
        self.backlog_bytes += nbytes

    def graded(self, count: int, nbytes: float) -> None:
        """Queued traces graded."""
        self.backlog -= count
        self.backlog_bytes = max(0.0, self.backlog_bytes - nbytes) if self.backlog else 0.0

    def check(self) -> None:
        """Say in the log when senders start being asked to retry later, and when that stops."""
        busy = self.overloaded()
        if busy == self._was_busy:
            return
        self._was_busy = busy
        if busy:
            log.warning(
                "holding %.0f MB, %d traces waiting to be graded: asking senders to retry later",
                self.bytes_held() / 1e6,
                self.backlog,
            )
        else:
            log.info("caught up: accepting requests again")

    def watch_memory(self) -> bool:
        """Export what is held; whether a burst that held much has drained, so the freed memory should be handed
        back to the OS (`release_memory`, off the event loop)."""
        held = self.bytes_held()
        self.metrics.bytes_held.set(held)
        self.metrics.grading_backlog.set(self.backlog)
        limit = self.max_bytes_held
        self._held_peak = max(self._held_peak, held)
        if self._held_peak >= limit / 8 and held <= limit / 16 and not self.backlog:
            self._held_peak = 0.0
            return True
        return False


def release_memory() -> None:
    """Hand memory freed after a burst back to the OS: a full collection, then glibc's `malloc_trim` (freed
    heap pages otherwise stay with the process)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
