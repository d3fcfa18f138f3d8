"""Tracing set-ups that capture scripts share: an OpenTelemetry SDK provider exporting each span as it ends
(OTLP/HTTP protobuf to the harness) for an instrumentation's instrumentors, or OpenLIT's own `openlit.init`.
Importable from any capture environment that has opentelemetry-sdk and its OTLP/HTTP exporter."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from opentelemetry import trace


def traced(service: str, instrumentors: Callable[[], list[Any]] | None = None) -> trace.Tracer:
    """Start tracing `service`: with `instrumentors`, each instrumentor on an SDK provider of its own;
    without, OpenLIT's setup (content on, its default), which instruments what it finds."""
    if instrumentors is None:
        import openlit

        openlit.init(
            otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
            application_name=service,
            service_name=service,
            disable_batch=True,
            disable_metrics=True,  # the harness records traces and logs only
            disabled_instrumentors=["urllib"],  # the harness's own control calls, not the service's
        )
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        for instrumentor in instrumentors():
            instrumentor.instrument(tracer_provider=provider)
    return trace.get_tracer(service)


def flush() -> None:
    """Export what the providers still hold, before the scenario closes."""
    from opentelemetry._logs import get_logger_provider

    for provider in (trace.get_tracer_provider(), get_logger_provider()):
        if hasattr(provider, "force_flush"):
            provider.force_flush()


def exported(service: str, content_logger: str | None = None) -> trace.Tracer:
    """Set global SDK providers for `service` that batch spans and log records to the OTLP/HTTP endpoint, for
    frameworks that trace to the global providers; with `content_logger`, the records of that Python logger (at
    INFO) become OTLP log records too, for frameworks that write message content as logging records."""
    import logging
    import warnings

    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": service})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    set_logger_provider(logs)
    if content_logger is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            handler = LoggingHandler(logger_provider=logs)
        logger = logging.getLogger(content_logger)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return trace.get_tracer(service)


def each_handled(scenarios: dict[str, tuple[str, list[dict[str, Any]]]], tracer: trace.Tracer) -> Iterator[Any]:
    """Open each scenario of {name: (request, replies)} in turn (nested runs allowed, for multi-agent systems) and
    hand the script its scenario and request inside the application's `handle_request` span; the providers are
    flushed before the scenario closes."""
    from client import each

    for scenario, request in each(scenarios, nested_runs_allowed=True):
        with tracer.start_as_current_span("handle_request"):
            yield scenario, request
        flush()
