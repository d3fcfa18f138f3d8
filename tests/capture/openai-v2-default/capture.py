"""The official OpenAI instrumentation in its default mode (no content) around a small tool loop.

The loop writes `invoke_agent` and `execute_tool` spans as the GenAI conventions describe, and, like
the instrumentation, records arguments, results and messages only when content capture is on (it is
not, here). Each scenario is wrapped in a `handle_request` span, as a web service would.
"""

import json

from client import Scenario, failure, text, tool, tools
from openai import OpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument()
tracer = trace.get_tracer("travel-agent")
client = OpenAI()

TOOLS = {
    "search_flights": lambda a: f"UA123 09:00 $320 ({a['origin']}-{a['destination']})",
    "book_flight": lambda a: "booked ABC123456",
    "charge_card": lambda a: (_ for _ in ()).throw(RuntimeError("card declined")),
    "get_weather": lambda a: {"Paris": "12C rain", "Tokyo": "18C sunny"}[a["city"]],
    "delete_account": lambda a: "account deleted",
}
SCHEMAS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}} for name in TOOLS]


def agent(s: Scenario, request: str) -> str | None:
    """One agent run: call the model until it answers without tool calls."""
    s.run("travel_agent", request)
    messages = [{"role": "system", "content": "You are a travel assistant."}, {"role": "user", "content": request}]
    llm_calls = 0
    with tracer.start_as_current_span(
        "invoke_agent travel_agent",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "travel_agent",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
        },
    ) as span:
        try:
            while True:
                llm_calls += 1
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SCHEMAS)
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    s.finish(message.content, "ok", llm_calls)
                    return message.content
                for call in message.tool_calls:
                    arguments = json.loads(call.function.arguments)
                    with tracer.start_as_current_span(
                        f"execute_tool {call.function.name}",
                        attributes={
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": call.function.name,
                            "gen_ai.tool.call.id": call.id,
                            "gen_ai.tool.type": "function",
                        },
                    ) as tool_span:
                        try:
                            result = TOOLS[call.function.name](arguments)
                            s.tool(call.function.name, arguments, result)
                        except Exception as exc:
                            tool_span.record_exception(exc)
                            tool_span.set_status(Status(StatusCode.ERROR, str(exc)))
                            tool_span.set_attribute("error.type", type(exc).__name__)
                            s.tool(call.function.name, arguments, error=True)
                            result = f"error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.set_attribute("error.type", type(exc).__name__)
            s.finish(None, "error", llm_calls)
            return None


LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]
SCENARIOS = {
    "happy": (
        "Book me the cheapest flight from SFO to JFK tomorrow.",
        [
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "tool_error": (
        "Charge my card 120 dollars for the upgrade.",
        [
            tool("charge_card", {"amount": 120}),
            text("Sorry, your card was declined."),
        ],
    ),
    "parallel": (
        "What's the weather in Paris and Tokyo?",
        [
            tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
            text("Paris: 12C and rain. Tokyo: 18C and sunny."),
        ],
    ),
    "agent_error": (
        "Book me a flight to Mars.",
        [
            tool("search_flights", {"origin": "SFO", "destination": "MARS"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for name, (request, replies) in SCENARIOS.items():
    with Scenario(name, replies) as s:
        with tracer.start_as_current_span("handle_request"):
            agent(s, request)
        s.runs[-1]["lacks"] = LACKS
        provider.force_flush()
