"""OTLP receivers (gRPC and HTTP) that feed received spans and GenAI log events to the assembler."""

from otelgrade.receivers.grpc import GrpcReceiver
from otelgrade.receivers.http import HttpReceiver
from otelgrade.receivers.ingest import Ingest, Outcome, RequestTooLarge, split_address

__all__ = ["GrpcReceiver", "HttpReceiver", "Ingest", "Outcome", "RequestTooLarge", "split_address"]
