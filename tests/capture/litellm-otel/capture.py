"""A hand-written tool loop through `litellm.completion`, traced by LiteLLM's own OpenTelemetry callback
(`litellm.callbacks = ["otel"]`, its documented integration) with its default settings.

No agent framework: the loop (`../tool_loop.py`) asks the model through LiteLLM (`openai/` provider against
OPENAI_BASE_URL), runs the claims tools (`../insurance.py`) as plain Python functions and answers their results
(a failing tool as "error: <reason>") in the next request. The OTel SDK's TracerProvider is set globally
before the first call, so the callback uses it. Each scenario is wrapped in a `handle_request` span, as a web
service would; `two_requests` serves two user requests in one trace.

With that span current, LiteLLM's callback (by default, without USE_OTEL_LITELLM_REQUEST_SPAN) writes each
call's attributes onto it, the last call's over the earlier ones' (a call logged after the span ended is lost
there, as its warning says), and a `raw_gen_ai_request` span per successful call beneath it carries the
provider's request and response (`llm.openai.messages`, `llm.openai.choices`, as Python reprs). A failing call
leaves `error.*` attributes on the application span and no span of its own.

Run as ../litellm-otel-redacted/capture.py (REDACTED=True), the same loop runs with
`litellm.turn_off_message_logging = True`, LiteLLM's switch that keeps message content off its spans.
"""

import json
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the bundled price list, no download

import litellm
from insurance import FUNCTIONS, REQUESTS, SCHEMAS
from litellm.litellm_core_utils.thread_pool_executor import executor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from tool_loop import Call, capture

REDACTED = globals().get("REDACTED", False)
SERVICE = "claims-desk"
provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
litellm.callbacks = ["otel"]
litellm.turn_off_message_logging = REDACTED
tracer = trace.get_tracer(SERVICE)
SYSTEM = "You are an insurance claims assistant."


class LiteLLMChat:
    """One request's conversation, through litellm.completion."""

    def __init__(self, request: str) -> None:
        self.messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request}]

    def ask(self):
        response = litellm.completion(
            model="openai/gpt-4o-mini",
            api_base=os.environ["OPENAI_BASE_URL"],
            messages=self.messages,
            tools=SCHEMAS,
        )
        message = response.choices[0].message
        asked = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls or ()
        ]
        self.messages.append(
            {"role": "assistant", "content": message.content, **({"tool_calls": asked} if asked else {})}
        )
        calls = [Call(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in asked]
        return message.content, calls

    def answer(self, results) -> None:
        self.messages += [{"role": "tool", "tool_call_id": call.id, "content": result} for call, result, _ in results]


def flush() -> None:
    """LiteLLM logs each successful call from its logging executor's threads, after the call returns: wait
    until every task it was given is done (each frees a slot), then export."""
    deadline = time.monotonic() + 30
    while executor._pending_slots._value < executor._max_pending_tasks and time.monotonic() < deadline:
        time.sleep(0.05)
    provider.force_flush()


# Redacted, each call's logging is only attributes on the application's span (no content, no span of its own),
# overwritten by the next call: neither the calls' number nor what was asked, called or answered is carried, nor
# where one request served under that span ends and the next begins (one run per span).
LACKS = ["input", "llm_calls", "messages", "output", "tool_arguments", "tool_calls", "tool_results"] if REDACTED else []
capture(
    LiteLLMChat,
    tracer.start_as_current_span,
    flush,
    names=("happy", "forbidden", "tool_error", "agent_error", "two_requests"),
    lacks=LACKS,
    tool_functions=FUNCTIONS,
    scenarios=REQUESTS,
    agent="claims_loop",
    one_run_per_span=REDACTED,
)
