"""OTLP receivers (gRPC and HTTP, traces and logs): transport in, request bodies out to an `Ingest`.

Every module in this package is imported here, so each receiver registers itself.
"""

import importlib
import pkgutil

from otelgrade.intake.receivers.access import OPEN, Access, unauthorized
from otelgrade.intake.receivers.base import (
    Encoding,
    ExportResult,
    Ingest,
    InvalidRequest,
    Overloaded,
    Receiver,
    RequestTooLarge,
    Signal,
    receiver_type,
    receiver_types,
    split_address,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "OPEN",
    "Access",
    "Encoding",
    "ExportResult",
    "Ingest",
    "InvalidRequest",
    "Overloaded",
    "Receiver",
    "RequestTooLarge",
    "Signal",
    "receiver_type",
    "receiver_types",
    "split_address",
    "unauthorized",
]
