"""OTLP/gRPC receiver: TraceService/Export and LogsService/Export on grpcio's asyncio server.

The services are registered with raw-bytes requests (no deserializer), so the decoder can repair
strings that are not valid UTF-8 instead of grpc refusing the whole request; an undecodable
request is answered INVALID_ARGUMENT, an oversized one RESOURCE_EXHAUSTED (grpc's own check of
`grpc.max_receive_message_length`, applied after decompression too).

Each call is handled as a request stream, so its message is read only once the call may be served:
one without the configured bearer token (`authorization` metadata) is answered UNAUTHENTICATED, and
one for which the receive allowance has no room for a message of `max_request_bytes` UNAVAILABLE,
both before grpc reads (and holds) the message. A message that has not arrived within
`body_read_timeout` is answered DEADLINE_EXCEEDED.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from otelgrade.core.settings import TlsSettings
from otelgrade.intake.receivers.access import OPEN, Access
from otelgrade.intake.receivers.base import (
    RETRY_AFTER_SECONDS,
    Ingest,
    InvalidRequest,
    Overloaded,
    Receiver,
    Signal,
    export_response,
    read_deadline_message,
    receiver_type,
    safe_message,
)

log = logging.getLogger(__name__)

PROTOCOL = "grpc"
UNAUTHENTICATED = "missing or wrong bearer token: send the metadata `authorization: Bearer <token>`"


async def _export(
    ingest: Ingest,
    access: Access,
    signal: Signal,
    requests: AsyncIterator[bytes],
    context: grpc.aio.ServicerContext[Any, Any],
) -> Any:
    metrics = ingest.metrics
    if not access.allows(dict(context.invocation_metadata() or ()).get("authorization")):
        metrics.requests.labels(PROTOCOL, signal, "unauthenticated").inc()
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, UNAUTHENTICATED)
    try:
        if ingest.busy():
            raise Overloaded("otelgrade is holding as much as it may; retry later")
        with ingest.receiving(ingest.max_request_bytes, context):  # the most grpc may hold while reading it
            request = await _read_message(requests, ingest.body_read_timeout)
        with ingest.receiving(len(request), context):
            result = await ingest.export(signal, request, "protobuf", PROTOCOL)
    except InvalidRequest as exc:
        metrics.requests.labels(PROTOCOL, signal, "invalid").inc()
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, safe_message(str(exc)))
        raise  # abort() raises; this line only satisfies the type checker
    except Overloaded as exc:
        metrics.requests.labels(PROTOCOL, signal, "overloaded").inc()
        message = safe_message(str(exc))
        await context.abort(grpc.StatusCode.UNAVAILABLE, message, retry_advice(message))  # OTLP exporters retry
        raise
    except TimeoutError:
        metrics.requests.labels(PROTOCOL, signal, "timeout").inc()
        await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, read_deadline_message(ingest.body_read_timeout))
        raise
    except Exception:
        log.exception("failed to handle an OTLP/gRPC %s request", signal)
        metrics.requests.labels(PROTOCOL, signal, "error").inc()
        await context.abort(grpc.StatusCode.INTERNAL, "internal error while receiving the request")
        raise
    metrics.requests.labels(PROTOCOL, signal, "partial" if result.rejected else "ok").inc()
    return export_response(signal, result)


def retry_advice(message: str) -> tuple[tuple[str, bytes], ...]:
    """Trailing metadata telling the sender when to retry (the OTLP spec's throttling): a `RetryInfo` in the status
    details (`grpc-status-details-bin`, read by Go exporters and the Collector), and on its own
    (`google.rpc.retryinfo-bin`, read by the Python exporter)."""
    retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=RETRY_AFTER_SECONDS))
    detail = any_pb2.Any()
    detail.Pack(retry)
    status = status_pb2.Status(code=code_pb2.UNAVAILABLE, message=message, details=[detail])
    return (
        ("grpc-status-details-bin", status.SerializeToString()),
        ("google.rpc.retryinfo-bin", retry.SerializeToString()),
    )


async def _read_message(requests: AsyncIterator[bytes], timeout: float) -> bytes:
    """The call's one request message, read within `timeout` seconds."""
    async with asyncio.timeout(timeout):
        messages = [message async for message in requests]
    if len(messages) != 1:
        raise InvalidRequest(f"a call carries one request message, not {len(messages)}")
    return messages[0]


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, ingest: Ingest, access: Access) -> None:
        self._ingest = ingest
        self._access = access

    async def Export(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await _export(self._ingest, self._access, "traces", requests, context)


class LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, ingest: Ingest, access: Access) -> None:
        self._ingest = ingest
        self._access = access

    async def Export(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await _export(self._ingest, self._access, "logs", requests, context)


def _raw_handler(service: str, export: Any, response_type: Any) -> grpc.GenericRpcHandler:
    """A unary method served as a request stream: the handler decides whether to read the message at all."""
    method = grpc.stream_unary_rpc_method_handler(
        export, request_deserializer=None, response_serializer=response_type.SerializeToString
    )
    return grpc.method_handlers_generic_handler(service, {"Export": method})


def _credentials(tls: TlsSettings) -> grpc.ServerCredentials:
    """TLS for the server; with a client CA, clients must present a certificate it signed."""
    ca = Path(tls.client_ca_file).read_bytes() if tls.client_ca_file is not None else None
    key_and_cert = (Path(tls.key_file).read_bytes(), Path(tls.cert_file).read_bytes())
    return grpc.ssl_server_credentials([key_and_cert], root_certificates=ca, require_client_auth=ca is not None)


@receiver_type("grpc", "localhost:4317")
def grpc_receiver(address: str, ingest: Ingest, access: Access = OPEN) -> Receiver:
    return GrpcReceiver(ingest, address, access)


class GrpcReceiver:
    """The gRPC server; `start` binds and returns the bound port (useful with port 0)."""

    def __init__(self, ingest: Ingest, address: str, access: Access = OPEN) -> None:
        self.address = address
        self._tls = access.tls
        self._server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", ingest.max_request_bytes),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
            ]
        )
        self._server.add_generic_rpc_handlers(
            (
                _raw_handler(
                    "opentelemetry.proto.collector.trace.v1.TraceService",
                    TraceService(ingest, access).Export,
                    trace_service_pb2.ExportTraceServiceResponse,
                ),
                _raw_handler(
                    "opentelemetry.proto.collector.logs.v1.LogsService",
                    LogsService(ingest, access).Export,
                    logs_service_pb2.ExportLogsServiceResponse,
                ),
            )
        )

    async def start(self) -> int:
        if self._tls is not None:
            port: int = self._server.add_secure_port(self.address, _credentials(self._tls))
        else:
            port = self._server.add_insecure_port(self.address)
        if port == 0:
            raise OSError(f"cannot listen for OTLP/gRPC on {self.address}")
        await self._server.start()
        return port

    async def stop(self, grace: float = 5.0) -> None:
        """Refuse new calls at once; let calls in progress finish for up to `grace` seconds."""
        await self._server.stop(grace)
