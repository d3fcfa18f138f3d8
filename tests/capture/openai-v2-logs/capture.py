"""A hand-written tool loop on the OpenAI SDK, traced by the official opentelemetry-instrumentation-openai-v2 with
message content on in its event mode: the content goes to log records only.

No agent framework and no agent or tool span: each chat completion is one `chat gpt-4o-mini` span without
content, and the prompts, the tool results and the model's choices (text or tool calls) are GenAI events sent
as OTLP log records (`gen_ai.user.message`, `gen_ai.tool.message`, `gen_ai.choice`, ...) tied to that span by
their trace and span ids, exported beside the spans to the same endpoint (`NNNN.logs.pb`). The tools are
plain Python functions the loop calls itself. Each scenario is wrapped in a `handle_request` span, as a web
service would; `two_requests` serves two user requests in one trace.
"""

import os

os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"

from hotel import FUNCTIONS, REQUESTS, SCHEMAS
from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from tool_loop import capture, openai_chat

resource = Resource.create({"service.name": "parcel-desk"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
log_provider = LoggerProvider(resource=resource)
log_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=log_provider)
tracer = trace.get_tracer("parcel-desk")


def flush() -> None:
    provider.force_flush()
    log_provider.force_flush()


capture(
    openai_chat(OpenAI(), SCHEMAS, "You are a hotel and parcel desk assistant."),
    tracer.start_as_current_span,
    flush,
    names=("happy", "forbidden", "tool_error", "parallel", "agent_error", "two_requests"),
    tool_functions=FUNCTIONS,
    scenarios=REQUESTS,
    agent="parcel_loop",
)
