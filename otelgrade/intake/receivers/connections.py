"""Connections bounded on every HTTP port (OTLP/HTTP, the metrics and grades page port): a connection that has not
sent a whole request's headers within `header_timeout` (of connecting, or of its last answer) is closed, and at
most `max_connections` are open at once. At the cap, the oldest connection still waiting for its request's headers
makes room for the new one (so `/healthz` and real senders get in while idle or trickling sockets pile up); when
every connection is busy with a request, the new one is refused. Either is said once per burst in the log.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from aiohttp import web

log = logging.getLogger("otelgrade.receivers")


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = 10.0  # seconds
    max_connections: int = 400  # per port
    setting: str = "receivers"  # where they are configured, for the log line

    def runner_args(self) -> dict[str, Any]:
        """For `web.AppRunner`: aiohttp closes a connection whose handler has waited this long for a request."""
        return {"keepalive_timeout": self.header_timeout}


class LimitedSite(web.TCPSite):
    """A `TCPSite` whose every connection goes through a `_Door` (the cap) and whose TLS handshakes must end within
    `header_timeout` too."""

    def __init__(
        self, runner: web.BaseRunner, host: str | None, port: int, limits: ConnectionLimits, **kw: Any
    ) -> None:
        super().__init__(runner, host, port, **kw)
        self.limits = limits

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner
        server = self._runner.server
        assert server is not None, "the runner is set up before its sites start"
        door = _Door(server, self.limits, f"{self._host or '0.0.0.0'}:{self._port}")
        ssl = self._ssl_context
        self._server = await asyncio.get_running_loop().create_server(
            door.protocol,
            self._host,
            self._port,
            ssl=ssl,
            ssl_handshake_timeout=self.limits.header_timeout if ssl is not None else None,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
            reuse_port=self._reuse_port,
        )


class _Door:
    """Counts the open connections of one port and keeps them under the cap."""

    def __init__(self, server: web.Server, limits: ConnectionLimits, where: str) -> None:
        self.server, self.limits, self.where = server, limits, where
        self.open: dict[_Connection, None] = {}  # oldest first
        self._said = False  # the cap was reached and logged; said again once the port has room

    def protocol(self) -> asyncio.Protocol:
        return _Connection(self, self.server())

    def admit(self, connection: _Connection) -> bool:
        """Take a new connection, making room by closing the oldest waiting one at the cap; False: refuse it."""
        cap = self.limits.max_connections
        if len(self.open) >= cap:
            waiting = next((c for c in self.open if c.waiting()), None)
            self._say(
                f"{cap} connections open on {self.where} ({self.limits.setting}.max_connections): "
                + (
                    "closing the oldest that has not sent a request, to make room"
                    if waiting is not None
                    else "every one busy with a request, refusing new ones"
                )
            )
            if waiting is None:
                return False
            waiting.close()
        elif len(self.open) < cap * 0.9:
            self._said = False
        self.open[connection] = None
        return True

    def left(self, connection: _Connection) -> None:
        self.open.pop(connection, None)

    def _say(self, line: str) -> None:
        if not self._said:
            self._said = True
            log.warning("%s", line)


class _Connection(asyncio.Protocol):
    """One connection: aiohttp's request handler, seen by the door when it opens and closes."""

    def __init__(self, door: _Door, handler: Any) -> None:
        self.door, self.handler = door, handler
        self.transport: asyncio.BaseTransport | None = None

    def waiting(self) -> bool:
        """Whether the connection has no request whose headers arrived (none being answered, none queued): new,
        sending its headers, or idle between requests. Read from aiohttp's handler (absent attributes: busy)."""
        return getattr(self.handler, "_request_in_progress", True) is False and not getattr(
            self.handler, "_messages", 1
        )

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.door.left(self)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.handler.connection_made(transport)
        if not self.door.admit(self):
            self.transport = None
            self.handler.force_close()
            transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.door.left(self)
        self.handler.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.handler.data_received(data)

    def eof_received(self) -> bool | None:
        result: bool | None = self.handler.eof_received()
        return result

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()
