"""A hand-written tool loop on the OpenAI SDK, traced by OpenLLMetry's opentelemetry-instrumentation-openai with
message content off (TRACELOOP_TRACE_CONTENT=false).

No agent framework and no agent or tool span: each chat completion is one `openai.chat` span, and the tools
are plain Python functions the loop calls itself. With content off the spans carry neither the prompts nor
the completions, so neither the request, the answer, the conversation nor the tool calls the model asked for
(names, arguments, results) reach the trace: every run lacks them. Each scenario is wrapped in a
`handle_request` span, as a web service would; `two_requests` serves two user requests in one trace.
"""

import os

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"

from hotel import FUNCTIONS, REQUESTS, SCHEMAS
from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from tool_loop import capture, openai_chat

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk")
LACKS = ["input", "messages", "output", "tool_arguments", "tool_calls", "tool_results"]

capture(
    openai_chat(OpenAI(), SCHEMAS, "You are a hotel desk assistant."),
    tracer.start_as_current_span,
    provider.force_flush,
    names=("happy", "forbidden", "tool_error", "parallel", "two_requests"),
    lacks=LACKS,
    tool_functions=FUNCTIONS,
    scenarios=REQUESTS,
    agent="desk_loop",
)
