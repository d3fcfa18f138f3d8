"""A hand-written tool loop on the OpenAI SDK, traced only by openinference-instrumentation-openai.

No agent framework and no agent or tool span: each chat completion is one LLM span, and the tools are
plain Python functions the loop calls itself. A tool's result reaches the trace only as a tool-role
message of the next request, joined to the model's call by its id; a failing tool is answered to the
model as "error: <reason>". Each scenario is wrapped in a `handle_request` span, as a web service would;
`two_requests` serves two separate user requests in one trace, each with a fresh conversation.
"""

import json

from client import Scenario
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import CHAT_TOOLS, STANDARD, tool_result

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
client = OpenAI()


def serve(s: Scenario, request: str) -> None:
    """One user request: ask the model, run the tools it asks for, until it answers in text."""
    s.run("travel_agent", request)
    conversation = [{"role": "system", "content": "You are a travel assistant."}, {"role": "user", "content": request}]
    calls = 0
    while True:
        calls += 1
        try:
            completion = client.chat.completions.create(model="gpt-4o-mini", messages=conversation, tools=CHAT_TOOLS)
        except Exception as exc:
            print(f"   request failed as scripted: {type(exc).__name__}: {exc}")
            s.finish(None, "error", calls)
            return
        message = completion.choices[0].message
        conversation.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            s.finish(message.content, "ok", calls)
            return
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            try:
                answer = tool_result(call.function.name, arguments)
                s.tool(call.function.name, arguments, answer)
            except Exception as exc:
                s.tool(call.function.name, arguments, error=True)
                answer = f"error: {exc}"
            conversation.append({"role": "tool", "tool_call_id": call.id, "content": answer})


SCENARIOS = {name: STANDARD[name] for name in STANDARD if name != "two_runs"}
SCENARIOS["two_requests"] = STANDARD["two_runs"]  # two user requests served one after the other, no agent span

for name, (requests, replies) in SCENARIOS.items():
    with Scenario(name, replies) as s:
        with tracer.start_as_current_span("handle_request"):
            for request in requests:
                serve(s, request)
        provider.force_flush()
