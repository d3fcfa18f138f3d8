"""Hot reload: the config file read again on SIGHUP or when it changes, and used only when it is safe to.

A file caught half-written is never read (it must keep the same mtime and size a tick apart, and while it is read);
a config that does not load or build, or would stop all grading without saying so (`suites: []` says so), is
refused, logged and counted, and the running one stays. Reading and building happen off the event loop, so the
service keeps answering meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable

from otelgrade.config import Config, load_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics

log = logging.getLogger("otelgrade")

CHECK_SECONDS = 1.0  # how often the config file's mtime and size are compared
SETTLE_SECONDS = 10.0  # a config file still changing after this long is not read
SETTLE_TICK_SECONDS = 0.05  # how long the file must keep its mtime and size to be read
NEEDS_RESTART = ("receivers", "metrics", "judge", "sinks", "ui", "durability", "conversations")

Install = Callable[[Config], Awaitable[None]]
"""Puts a new config to use (builds its graders, swaps it in); raising refuses it."""


class Reloader:
    """Watches one config file (`path`; None: the embedded default, nothing to reload) and reloads it."""

    def __init__(self, path: str | None, metrics: Metrics, clock: Callable[[], float]) -> None:
        self.path, self.metrics, self.clock = path, metrics, clock
        self.load = load_config  # how the file is read (a grading worker adjusts what it reads)
        self._stamp = self.stamp()
        self._next_check = clock() + CHECK_SECONDS
        self._lock = asyncio.Lock()

    def stamp(self) -> tuple[int, int] | None:
        """The config file's (mtime, size), or None without one."""
        if self.path is None:
            return None
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def changed(self, now: float) -> bool:
        """Whether the file changed since it was last read or checked (compared every `CHECK_SECONDS`)."""
        if now < self._next_check:
            return False
        self._next_check = now + CHECK_SECONDS
        stamp = self.stamp()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        return True

    async def _read_settled(self) -> Config:
        """The config file, read once it has stopped changing (the same mtime and size a tick apart, and
        unchanged while it was read), so a file caught half-written is never installed."""
        assert self.path is not None
        give_up = self.clock() + SETTLE_SECONDS
        while True:
            before = self.stamp()
            await asyncio.sleep(SETTLE_TICK_SECONDS)
            if self.stamp() == before:
                config = await asyncio.to_thread(self.load, self.path)  # the loop keeps answering
                if self.stamp() == before:
                    self._stamp = before
                    return config
            if self.clock() > give_up:
                raise ConfigError(f"the file kept changing for {SETTLE_SECONDS:g}s", file=self.path)

    async def reload(self, why: str, running: Callable[[], Config], install: Install) -> bool:
        """Read the file again and `install` it over the `running` config; a config that does not load or build,
        or would stop all grading without saying so, is refused (logged, counted) and the running one stays."""
        async with self._lock:
            if self.path is None:
                log.info("%s: running on the embedded default config, nothing to reload", why)
                return False
            old = running()
            try:
                config = await self._read_settled()
                refuse_empty(config, old)
                await install(config)
            except Exception as exc:
                self.metrics.config_reloads.labels("refused").inc()
                log.error("config reload (%s) refused, the running config stays: %s", why, exc)
                return False
            fixed = [key for key in NEEDS_RESTART if getattr(old, key) != getattr(config, key)]
            if fixed:
                log.warning("config reload: changes to %s take effect after a restart", ", ".join(fixed))
            self.metrics.config_reloads.labels("ok").inc()
            log.info("config reloaded (%s): %d suite(s)", why, len(config.suites))
            return True


def refuse_empty(config: Config, running: Config) -> None:
    """A config that grades nothing replaces one that grades something only when it says so (`suites: []`):
    an emptied or truncated file must not silently stop grading."""
    if not config.suites and running.suites and not config.suites_listed:
        raise ConfigError(
            f"it has no suites, so it would grade nothing while the running config grades with "
            f"{len(running.suites)} suite(s); to grade nothing on purpose, write `suites: []`",
            file=config.source,
        )
