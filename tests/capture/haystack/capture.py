"""A Haystack Agent (OpenAIChatGenerator, function tools) traced by openinference-instrumentation-haystack.

The instrumentation wraps every component's `run`, so the Agent, its chat generator and its tool invoker
each write a span. A failing tool does not stop the run (the Agent's default): the model gets the
failure as the tool's result. The model calls are counted from the HTTP requests the generator's client
sends (retries off), not from the spans. Each scenario is wrapped in a `handle_request` span, as a web
service would.
"""

import os

from client import Scenario
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import create_tool_from_function
from openinference.instrumentation.haystack import HaystackInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import STANDARD, travel_tools

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
HaystackInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
s: Scenario  # the scenario being captured; the tools record into it
model_requests = 0


def count_request(request) -> None:
    global model_requests
    model_requests += 1


generator = OpenAIChatGenerator(
    model="gpt-4o-mini",
    api_base_url=os.environ["OPENAI_BASE_URL"],
    max_retries=0,
    http_client_kwargs={"event_hooks": {"request": [count_request]}},
)
agent = Agent(
    chat_generator=generator,
    tools=[create_tool_from_function(f) for f in travel_tools(lambda: s)],
    system_prompt="You are a travel assistant.",
)
agent.warm_up()


def run(request: str) -> None:
    global model_requests
    s.run("Agent", request)
    model_requests = 0
    try:
        result = agent.run(messages=[ChatMessage.from_user(request)])
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        s.finish(None, "error", model_requests)
        return
    s.finish(result["last_message"].text, "ok", model_requests)


for name, (requests, replies) in STANDARD.items():
    with Scenario(name, replies) as s:
        with tracer.start_as_current_span("handle_request"):
            for request in requests:
                run(request)
        provider.force_flush()
