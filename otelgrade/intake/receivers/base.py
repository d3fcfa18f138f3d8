"""What every OTLP receiver shares: the request vocabulary, the `Ingest` it hands requests to, the
export response, and the registry by which each receiver file adds itself to `receivers:`.

A receiver knows transport only: it reads a body, asks `Ingest` to keep it, and answers in its protocol's
terms. A new receiver is one file in this package registered with `@receiver_type(name, default_address)`;
its factory also takes the listener's `Access` (TLS and bearer token).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otelgrade.core.metrics import Metrics
from otelgrade.core.registry import Registry
from otelgrade.intake.receivers.access import Access

Signal = Literal["traces", "logs"]
Encoding = Literal["protobuf", "json"]

RETRY_AFTER_SECONDS = 2
MAX_MESSAGE_CHARS = 1000  # longest message sent back to a client (parse errors can quote the input)


class InvalidRequest(ValueError):
    """The payload as a whole cannot be decoded (HTTP 400, gRPC INVALID_ARGUMENT)."""


class RequestTooLarge(ValueError):
    """The payload (or what it decompresses to) is over `receivers.max_request_bytes` (HTTP 413)."""


class Overloaded(RuntimeError):
    """Grading has fallen behind; the request is refused as retryable (HTTP 503, gRPC UNAVAILABLE)."""


def read_deadline_message(timeout: float) -> str:
    """Why a request whose body did not arrive in time was refused (HTTP 408, gRPC DEADLINE_EXCEEDED)."""
    return f"the request did not arrive within {timeout:g}s (receivers.body_read_timeout); send it faster"


@dataclass(slots=True, frozen=True)
class ExportResult:
    """One export request's answer: `rejected` items were not kept; `message` explains (or warns)."""

    rejected: int = 0
    message: str = ""


class Ingest(Protocol):
    """Where receivers hand requests. Called on the event loop's thread."""

    metrics: Metrics
    max_request_bytes: int
    body_read_timeout: float  # seconds a request body (or gRPC message) may take to arrive

    def busy(self) -> bool:
        """True while senders should back off (answer 503 / UNAVAILABLE before reading the body)."""
        ...

    def fits(self, nbytes: int, sender: object = None) -> bool:
        """Whether `nbytes` more could be counted as being received now for `sender` (what `receiving` would
        allow)."""
        ...

    def receiving(self, nbytes: int, sender: object = None) -> AbstractContextManager[None]:
        """Count `nbytes` of a body as being received for `sender` (a request: what identifies it for the fair
        split of the allowance; None: a sender of its own) while the block runs (reading, decoding, keeping);
        raises `Overloaded` when too many bytes are being received at once and the sender has its share."""
        ...

    async def export(self, signal: Signal, body: bytes, encoding: Encoding, protocol: str) -> ExportResult:
        """Keep one request; raises `InvalidRequest` or `Overloaded`."""
        ...


class Receiver(Protocol):
    async def start(self) -> int:
        """Listen; return the bound port (useful with port 0)."""
        ...

    async def stop(self) -> None:
        """Refuse new requests; let those in progress finish briefly."""
        ...


class ReceiverFactory(Protocol):
    def __call__(self, address: str, ingest: Ingest, access: Access = ...) -> Receiver: ...


@dataclass(frozen=True)
class ReceiverType:
    name: str
    factory: ReceiverFactory
    default_address: str | None


RECEIVER_TYPES: Registry[ReceiverType] = Registry("receiver", key="receivers")
"""Every receiver by the name it is configured under in `receivers:`."""


def receiver_type(name: str, default_address: str | None) -> Callable[[ReceiverFactory], ReceiverFactory]:
    """Register a receiver: `receivers: {<name>: host:port}` starts it (null turns it off)."""

    def register(factory: ReceiverFactory) -> ReceiverFactory:
        RECEIVER_TYPES.add(name, ReceiverType(name, factory, default_address))
        return factory

    return register


def receiver_types() -> dict[str, ReceiverType]:
    """Every registered receiver by name (the package registers its modules when imported)."""
    return dict(sorted(RECEIVER_TYPES.items()))


def export_response(signal: Signal, result: ExportResult) -> Message:
    """The ExportTraceServiceResponse / ExportLogsServiceResponse for a result (partial success if any)."""
    if signal == "traces":
        traces = trace_service_pb2.ExportTraceServiceResponse()
        if result.rejected or result.message:
            traces.partial_success.rejected_spans = result.rejected
            traces.partial_success.error_message = safe_message(result.message)
        return traces
    logs = logs_service_pb2.ExportLogsServiceResponse()
    if result.rejected or result.message:
        logs.partial_success.rejected_log_records = result.rejected
        logs.partial_success.error_message = safe_message(result.message)
    return logs


def safe_message(text: str) -> str:
    """A message fit to send back: encodable as UTF-8 (lone surrogates become `?`) and not too long."""
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS] + "..."
    return text.encode("utf-8", "replace").decode()


def split_address(address: str) -> tuple[str, int]:
    """`host:port` (also `[::1]:4317`, `:4317`) -> (host, port); raises ValueError when unusable."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)
