"""OTLP/HTTP receiver (aiohttp): `POST /v1/traces` and `POST /v1/logs`, protobuf or OTLP JSON,
optionally gzip-compressed, answered in the request's content type.

Bodies are read as a stream with a byte cap (chunked requests without Content-Length work), and
gzip is inflated here with the same cap, never by aiohttp, so a gzip bomb costs at most the limit.
A body counts toward the receive allowance as it arrives (a sender that trickles holds only what it sent),
and must arrive within `body_read_timeout`, else 408 and the connection is closed.
Inflating takes time linear in the body (however many gzip members it holds) and runs on a worker
thread, so the event loop keeps answering other requests meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import zlib
from typing import Any

from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2

from otelgrade.intake.receivers.access import OPEN, Access, unauthorized
from otelgrade.intake.receivers.base import (
    RETRY_AFTER_SECONDS,
    Encoding,
    Ingest,
    InvalidRequest,
    Overloaded,
    Receiver,
    RequestTooLarge,
    Signal,
    export_response,
    read_deadline_message,
    receiver_type,
    safe_message,
    split_address,
)

log = logging.getLogger(__name__)

PROTOCOL = "http"
_GZIP_CHUNK = 64 * 1024  # most output (and input) handed over per zlib call
_GZIP_FIRST_FEED = 64  # the input first fed to a gzip member; doubles up to _GZIP_CHUNK
_SIGNALS: dict[str, Signal] = {"/v1/traces": "traces", "/v1/logs": "logs"}
_CONTENT_TYPES: dict[str, Encoding] = {"application/x-protobuf": "protobuf", "application/json": "json"}
_MEDIA_TYPE = {"protobuf": "application/x-protobuf", "json": "application/json"}


def _encode(message: Message, encoding: Encoding) -> bytes:
    encoded: bytes = (
        json_format.MessageToJson(message, indent=None).encode() if encoding == "json" else message.SerializeToString()
    )
    return encoded


def _status_body(code: int, message: str, encoding: Encoding) -> bytes:
    return _encode(status_pb2.Status(code=code, message=safe_message(message)), encoding)


def _status(http_status: int, code: int, message: str, encoding: Encoding = "protobuf") -> web.Response:
    body = _status_body(code, message, encoding)
    return web.Response(status=http_status, body=body, content_type=_MEDIA_TYPE[encoding])


async def _read_counted(request: web.Request, ingest: Ingest, counted: contextlib.ExitStack) -> bytes:
    """The body, each piece counted as being received (in `counted`) as it arrives; raises `RequestTooLarge`
    past `max_request_bytes`, `Overloaded` when the allowance has no room for it, `TimeoutError` when it has
    not all arrived within `body_read_timeout`."""
    limit = ingest.max_request_bytes
    if request.content_length is not None and request.content_length > limit:
        raise RequestTooLarge(f"the body ({request.content_length} bytes) is over the {limit}-byte limit")
    body = bytearray()
    async with asyncio.timeout(ingest.body_read_timeout):
        async for chunk in request.content.iter_any():
            if len(body) + len(chunk) > limit:
                raise RequestTooLarge(f"the body is over the {limit}-byte limit")
            counted.enter_context(ingest.receiving(len(chunk), request))
            body += chunk
    return bytes(body)


def _overloaded(count: Any, signal: Signal, encoding: Encoding) -> web.Response:
    count.labels(PROTOCOL, signal, "overloaded").inc()
    response = _status(503, code_pb2.UNAVAILABLE, "grading is behind; retry later", encoding)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)  # OTLP exporters honour it
    return response


@receiver_type("http", "localhost:4318")
def http_receiver(address: str, ingest: Ingest, access: Access = OPEN) -> Receiver:
    return HttpReceiver(ingest, address, access)


class HttpReceiver:
    """The aiohttp application and its listener; `start` returns the bound port (useful with port 0)."""

    def __init__(self, ingest: Ingest, address: str, access: Access = OPEN) -> None:
        self._ingest = ingest
        self.address = address
        self._access = access
        self.app = web.Application(middlewares=access.middlewares(self._unauthenticated))
        self.app.router.add_post("/v1/traces", self._traces)
        self.app.router.add_post("/v1/logs", self._logs)
        # auto_decompress=False: aiohttp would inflate gzip bodies itself, without our cap. handler_cancellation: a
        # request whose sender went away stops, and gives back the receive allowance it held (see `_export`).
        self._runner = web.AppRunner(self.app, auto_decompress=False, access_log=None, handler_cancellation=True)
        self._site: web.TCPSite | None = None

    async def start(self) -> int:
        host, port = split_address(self.address)
        await self._runner.setup()
        self._site = web.TCPSite(
            self._runner, host or None, port, reuse_address=True, ssl_context=self._access.ssl_context()
        )
        await self._site.start()
        server: Any = self._site._server
        return int(server.sockets[0].getsockname()[1]) if server and server.sockets else port

    async def stop(self) -> None:
        await self._runner.cleanup()

    async def _traces(self, request: web.Request) -> web.Response:
        return await self._receive(request, "traces")

    async def _logs(self, request: web.Request) -> web.Response:
        return await self._receive(request, "logs")

    async def _receive(self, request: web.Request, signal: Signal) -> web.Response:
        """`_export` with the body counted as being received from its first byte until it is kept; a request whose
        declared length does not fit in the receive allowance is refused before its body is read."""
        try:
            with contextlib.ExitStack() as counted:
                if request.content_length is not None and not self._ingest.fits(request.content_length, request):
                    raise Overloaded("too many bytes are being received at once; retry later")
                return await self._export(request, signal, counted)
        except Overloaded:
            encoding = _CONTENT_TYPES.get(request.content_type, "protobuf")
            refused = _overloaded(self._ingest.metrics.requests, signal, encoding)
            if not request.content.at_eof():
                refused.force_close()  # rather than read the rest of a body that is refused
            return refused

    def _unauthenticated(self, request: web.Request) -> web.Response:
        self._ingest.metrics.requests.labels(PROTOCOL, _SIGNALS.get(request.path, "other"), "unauthenticated").inc()
        encoding = _CONTENT_TYPES.get(request.content_type, "protobuf")
        body = _status_body(code_pb2.UNAUTHENTICATED, "missing or wrong bearer token", encoding)
        return unauthorized(body, _MEDIA_TYPE[encoding])

    async def _export(self, request: web.Request, signal: Signal, counted: contextlib.ExitStack) -> web.Response:
        ingest = self._ingest
        count = ingest.metrics.requests
        encoding = _CONTENT_TYPES.get(request.content_type)
        if encoding is None:
            count.labels(PROTOCOL, signal, "unsupported").inc()
            return _status(
                415,
                code_pb2.INVALID_ARGUMENT,
                f"unsupported Content-Type {request.content_type!r}; use application/x-protobuf or application/json",
            )
        content_encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
        if content_encoding not in ("gzip", "identity", ""):
            count.labels(PROTOCOL, signal, "unsupported").inc()
            return _status(
                415, code_pb2.INVALID_ARGUMENT, f"unsupported Content-Encoding {content_encoding!r}", encoding
            )
        if ingest.busy():
            return _overloaded(count, signal, encoding)
        limit = ingest.max_request_bytes
        try:
            body = await _read_counted(request, ingest, counted)
            if content_encoding == "gzip":
                counted.enter_context(ingest.receiving(limit, request))  # the most it may inflate to
                body = await asyncio.to_thread(gunzip_capped, body, limit)
        except RequestTooLarge as exc:
            count.labels(PROTOCOL, signal, "too_large").inc()
            return _status(413, code_pb2.RESOURCE_EXHAUSTED, str(exc), encoding)
        except TimeoutError:
            count.labels(PROTOCOL, signal, "timeout").inc()
            late = _status(408, code_pb2.DEADLINE_EXCEEDED, read_deadline_message(ingest.body_read_timeout), encoding)
            late.force_close()  # the rest of the body is not read
            return late
        except (zlib.error, EOFError) as exc:
            count.labels(PROTOCOL, signal, "invalid").inc()
            return _status(400, code_pb2.INVALID_ARGUMENT, f"invalid gzip body: {exc}", encoding)
        try:
            # Shielded: a request kept in part (spooled, handed to a worker) is kept whole though its sender went away.
            keeping = asyncio.ensure_future(ingest.export(signal, body, encoding, PROTOCOL))
            keeping.add_done_callback(_outcome_read)
            result = await asyncio.shield(keeping)
        except InvalidRequest as exc:
            count.labels(PROTOCOL, signal, "invalid").inc()
            return _status(400, code_pb2.INVALID_ARGUMENT, str(exc), encoding)
        except Overloaded:
            return _overloaded(count, signal, encoding)
        except Exception:
            log.exception("failed to handle an OTLP/HTTP %s request", signal)
            count.labels(PROTOCOL, signal, "error").inc()
            return _status(500, code_pb2.INTERNAL, "internal error while receiving the request", encoding)
        count.labels(PROTOCOL, signal, "partial" if result.rejected else "ok").inc()
        return web.Response(body=_encode(export_response(signal, result), encoding), content_type=_MEDIA_TYPE[encoding])


def _outcome_read(task: asyncio.Future[Any]) -> None:
    """Read a shielded export's outcome, which nobody awaits once its sender has gone."""
    if not task.cancelled():
        task.exception()


def gunzip_capped(data: bytes, limit: int) -> bytes:
    """Decompress a gzip body, refusing (without inflating it all) output larger than `limit`.

    Linear in the body's size however many gzip members it concatenates: each member is fed from an
    offset into the body in pieces that start small and double, so what zlib copies back as unused
    input is bounded by what the member itself consumed."""
    out = bytearray()
    view = memoryview(data)
    fed = 0  # bytes of `data` handed to an inflater so far
    while fed < len(data):  # one pass per gzip member; concatenated members are valid gzip
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        step = _GZIP_FIRST_FEED
        pending: bytes | memoryview = b""
        while not inflater.eof:
            if not pending and fed < len(data):
                pending = view[fed : fed + step]
                fed += len(pending)
                step = min(2 * step, _GZIP_CHUNK)
            chunk = inflater.decompress(pending, _GZIP_CHUNK)
            if not chunk and not pending:
                raise zlib.error("truncated gzip stream")
            out += chunk
            if len(out) > limit:
                raise RequestTooLarge(f"the decompressed body is over the {limit}-byte limit")
            pending = inflater.unconsumed_tail
        fed -= len(inflater.unused_data)
    return bytes(out)
