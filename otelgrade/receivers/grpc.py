"""OTLP/gRPC receiver: TraceService/Export and LogsService/Export on grpcio's asyncio server.

The services are registered with raw-bytes requests (no deserializer), so the decoder can repair
strings that are not valid UTF-8 instead of grpc refusing the whole request; an undecodable
request is answered INVALID_ARGUMENT, an oversized one RESOURCE_EXHAUSTED (grpc's own check of
`grpc.max_receive_message_length`, applied after decompression too).
"""

from __future__ import annotations

import logging
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from otelgrade.receivers.base import (
    Ingest,
    InvalidRequest,
    Overloaded,
    Receiver,
    Signal,
    export_response,
    receiver_type,
)

log = logging.getLogger(__name__)

PROTOCOL = "grpc"


async def _export(ingest: Ingest, signal: Signal, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
    metrics = ingest.metrics
    try:
        result = await ingest.export(signal, request, "protobuf", PROTOCOL)
    except InvalidRequest as exc:
        metrics.requests.labels(PROTOCOL, signal, "invalid").inc()
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        raise  # abort() raises; this line only satisfies the type checker
    except Overloaded as exc:
        metrics.requests.labels(PROTOCOL, signal, "overloaded").inc()
        await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))  # OTLP exporters retry with backoff
        raise
    except Exception:
        log.exception("failed to handle an OTLP/gRPC %s request", signal)
        metrics.requests.labels(PROTOCOL, signal, "error").inc()
        await context.abort(grpc.StatusCode.INTERNAL, "internal error while receiving the request")
        raise
    metrics.requests.labels(PROTOCOL, signal, "partial" if result.rejected else "ok").inc()
    return export_response(signal, result)


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, ingest: Ingest) -> None:
        self._ingest = ingest

    async def Export(self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await _export(self._ingest, "traces", request, context)


class LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, ingest: Ingest) -> None:
        self._ingest = ingest

    async def Export(self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await _export(self._ingest, "logs", request, context)


def _raw_handler(service: str, export: Any, response_type: Any) -> grpc.GenericRpcHandler:
    method = grpc.unary_unary_rpc_method_handler(
        export, request_deserializer=None, response_serializer=response_type.SerializeToString
    )
    return grpc.method_handlers_generic_handler(service, {"Export": method})


@receiver_type("grpc", "0.0.0.0:4317")
def grpc_receiver(address: str, ingest: Ingest) -> Receiver:
    return GrpcReceiver(ingest, address)


class GrpcReceiver:
    """The gRPC server; `start` binds and returns the bound port (useful with port 0)."""

    def __init__(self, ingest: Ingest, address: str) -> None:
        self.address = address
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
                    TraceService(ingest).Export,
                    trace_service_pb2.ExportTraceServiceResponse,
                ),
                _raw_handler(
                    "opentelemetry.proto.collector.logs.v1.LogsService",
                    LogsService(ingest).Export,
                    logs_service_pb2.ExportLogsServiceResponse,
                ),
            )
        )

    async def start(self) -> int:
        port: int = self._server.add_insecure_port(self.address)
        if port == 0:
            raise OSError(f"cannot listen for OTLP/gRPC on {self.address}")
        await self._server.start()
        return port

    async def stop(self, grace: float = 5.0) -> None:
        """Refuse new calls at once; let calls in progress finish for up to `grace` seconds."""
        await self._server.stop(grace)
