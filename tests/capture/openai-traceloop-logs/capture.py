"""A hand-written tool loop on the OpenAI SDK, traced by OpenLLMetry's opentelemetry-instrumentation-openai in its
events mode (`use_attributes=False`, formerly `use_legacy_attributes=False`): the message content goes to OTLP log
records only, none is on the spans.

No agent framework and no agent or tool span: each chat completion is one `openai.chat` span, and the prompts,
the tool results and the model's choices (text or tool calls) are GenAI events (`gen_ai.user.message`,
`gen_ai.tool.message`, `gen_ai.choice`, ...) sent as log records tied to that span by trace and span id, exported
beside the spans to the same endpoint (`NNNN.logs.pb`). The tools are the energy-utility desk's (`energy.py`),
plain Python functions the loop calls itself. Each scenario is wrapped in a `handle_request` span, as a web
service would; `two_requests` serves two user requests in one trace.

Run as ../anthropic-traceloop-logs/capture.py (ANTHROPIC=True), the same loop runs on the Anthropic SDK under
opentelemetry-instrumentation-anthropic in the same mode instead.
"""

from energy import FUNCTIONS, MESSAGES_TOOLS, REQUESTS, SCHEMAS
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from tool_loop import anthropic_chat, capture, openai_chat

ANTHROPIC = globals().get("ANTHROPIC", False)
SERVICE = "meter-desk" if ANTHROPIC else "tariff-desk"
resource = Resource.create({"service.name": SERVICE})
provider = TracerProvider(resource=resource)
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
log_provider = LoggerProvider(resource=resource)
log_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
if ANTHROPIC:
    from anthropic import Anthropic
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor(use_attributes=False).instrument(tracer_provider=provider, logger_provider=log_provider)
    chat = anthropic_chat(Anthropic(), MESSAGES_TOOLS, "You are an energy utility's meter desk.")
    names, agent = ("happy", "forbidden", "tool_error", "agent_error", "two_requests"), "meter_loop"
else:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor(use_attributes=False).instrument(tracer_provider=provider, logger_provider=log_provider)
    chat = openai_chat(OpenAI(), SCHEMAS, "You are an energy utility's tariff desk.")
    names, agent = ("happy", "forbidden", "tool_error", "parallel", "agent_error", "two_requests"), "tariff_loop"
tracer = trace.get_tracer(SERVICE)


def flush() -> None:
    provider.force_flush()
    log_provider.force_flush()


capture(
    chat,
    tracer.start_as_current_span,
    flush,
    names=names,
    tool_functions=FUNCTIONS,
    scenarios=REQUESTS,
    agent=agent,
)
