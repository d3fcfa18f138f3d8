"""A hand-written tool loop on the Anthropic SDK, traced by Pydantic Logfire's `logfire.instrument_anthropic()`.

The model is the harness's scripted Anthropic Messages API (ANTHROPIC_BASE_URL): tool calls come as
`tool_use` content blocks, results go back as `tool_result` blocks (`is_error` for a failing tool). Logfire
exports to OTEL_EXPORTER_OTLP_ENDPOINT itself (`send_to_logfire=False`, OTLP/HTTP protobuf); each model call
is one `Message with 'claude-haiku-4-5'` span, the scenario a `handle_request` span.

Run as ../anthropic-openinference/capture.py (OPENINFERENCE=True), the same loop is traced by
openinference-instrumentation-anthropic instead: model-call spans only.
"""

from anthropic import Anthropic
from tool_loop import FUNCTIONS, SYSTEM, Call, capture

OPENINFERENCE = globals().get("OPENINFERENCE", False)
TOOLS = [
    {"name": name, "description": name.replace("_", " "), "input_schema": {"type": "object"}} for name in FUNCTIONS
]


class AnthropicChat:
    """One request's Messages API conversation."""

    def __init__(self, request: str) -> None:
        self.messages = [{"role": "user", "content": request}]

    def ask(self):
        message = client.messages.create(
            model="claude-haiku-4-5", max_tokens=1024, system=SYSTEM, messages=self.messages, tools=TOOLS
        )
        self.messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
        )
        text = "".join(b.text for b in message.content if b.type == "text") or None
        return text, [Call(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]

    def answer(self, results):
        blocks = [
            {"type": "tool_result", "tool_use_id": call.id, "content": result, "is_error": failed}
            for call, result, failed in results
        ]
        self.messages.append({"role": "user", "content": blocks})


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
    client = Anthropic()
    tracer = trace.get_tracer("travel-service")
    capture(
        AnthropicChat,
        tracer.start_as_current_span,
        provider.force_flush,
        names=("happy", "forbidden", "tool_error", "agent_error", "two_requests"),
    )
else:
    import logfire

    logfire.configure(service_name="travel-service", send_to_logfire=False, console=False, metrics=False)
    logfire.instrument_anthropic()
    client = Anthropic()
    capture(AnthropicChat, logfire.span, logfire.force_flush, renamed={"two_requests": "two_runs"})
