"""A hand-written tool loop on the Anthropic SDK, traced by Pydantic Logfire's `logfire.instrument_anthropic()`.

The model is the harness's scripted Anthropic Messages API (ANTHROPIC_BASE_URL): tool calls come as
`tool_use` content blocks, results go back as `tool_result` blocks (`is_error` for a failing tool). Logfire
exports to OTEL_EXPORTER_OTLP_ENDPOINT itself (`send_to_logfire=False`, OTLP/HTTP protobuf); each model call
is one `Message with 'claude-haiku-4-5'` span, the scenario a `handle_request` span.

Run as ../anthropic-openinference/capture.py (OPENINFERENCE=True), the same loop is traced by
openinference-instrumentation-anthropic instead: model-call spans only.
"""

from anthropic import Anthropic
from tool_loop import FUNCTIONS, anthropic_chat, capture

OPENINFERENCE = globals().get("OPENINFERENCE", False)
TOOLS = [
    {"name": name, "description": name.replace("_", " "), "input_schema": {"type": "object"}} for name in FUNCTIONS
]


if OPENINFERENCE:
    from openinference.instrumentation.anthropic import AnthropicInstrumentor
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    AnthropicInstrumentor().instrument(tracer_provider=provider)
    tracer = trace.get_tracer("travel-service")
    capture(
        anthropic_chat(Anthropic(), TOOLS),
        tracer.start_as_current_span,
        provider.force_flush,
        names=("happy", "forbidden", "tool_error", "agent_error", "two_requests"),
    )
else:
    import logfire

    logfire.configure(service_name="travel-service", send_to_logfire=False, console=False, metrics=False)
    logfire.instrument_anthropic()
    capture(anthropic_chat(Anthropic(), TOOLS), logfire.span, logfire.force_flush, renamed={"two_requests": "two_runs"})
