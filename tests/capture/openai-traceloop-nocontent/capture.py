"""A hand-written tool loop on the OpenAI SDK, traced by OpenLLMetry's opentelemetry-instrumentation-openai with
message content off (TRACELOOP_TRACE_CONTENT=false).

No agent framework and no agent or tool span: each chat completion is one `openai.chat` span, and the tools
are plain Python functions the loop calls itself. With content off the spans carry neither the prompts nor
the completions, so neither the request, the answer, the conversation nor the tool calls the model asked for
(names, arguments, results) reach the trace: every run lacks them. Each scenario is wrapped in a
`handle_request` span, as a web service would; `two_requests` serves two user requests in one trace.

Run as ../anthropic-traceloop-nocontent/capture.py (ANTHROPIC=True), the same loop runs on the Anthropic SDK
under opentelemetry-instrumentation-anthropic instead.
"""

import os

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"

from hotel import FUNCTIONS, MESSAGES_TOOLS, REQUESTS, SCHEMAS
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from tool_loop import anthropic_chat, capture, openai_chat

ANTHROPIC = globals().get("ANTHROPIC", False)
SERVICE = "guest-services" if ANTHROPIC else "hotel-desk"
provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
if ANTHROPIC:
    from anthropic import Anthropic
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument(tracer_provider=provider)
    chat = anthropic_chat(Anthropic(), MESSAGES_TOOLS, "You are a guest services assistant.")
    names, agent = ("happy", "forbidden", "tool_error", "agent_error", "two_requests"), "guest_loop"
else:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    chat = openai_chat(OpenAI(), SCHEMAS, "You are a hotel desk assistant.")
    names, agent = ("happy", "forbidden", "tool_error", "parallel", "two_requests"), "desk_loop"
tracer = trace.get_tracer(SERVICE)
LACKS = ["input", "messages", "output", "tool_arguments", "tool_calls", "tool_results"]

capture(
    chat,
    tracer.start_as_current_span,
    provider.force_flush,
    names=names,
    lacks=LACKS,
    tool_functions=FUNCTIONS,
    scenarios=REQUESTS,
    agent=agent,
)
