"""OpenAI Agents SDK (chat-completions model) traced by openinference-instrumentation-openai-agents.

The instrumentor replaces the SDK's own trace processors (exclusive mode, its default), so the
SDK's hosted trace export never runs; its spans go through an OTel SDK TracerProvider to the
OTLP/HTTP exporter. Content is on by default. Each scenario is wrapped in a `handle_request` span.
The handoff scenario is one `Runner.run` in which triage_agent hands over to booking_agent: two runs, the
second taking over the request.
"""

import asyncio

from agents import Agent, OpenAIChatCompletionsModel, RunHooks, Runner, function_tool
from client import Scenario, failure, text, tool, tools
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())
s: Scenario  # the scenario being captured; the tools record into it


def recorded(name, arguments, result):
    s.tool(name, arguments, result)
    return result


@function_tool
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return recorded("search_flights", {"origin": origin, "destination": destination}, "UA123 09:00 $320")


@function_tool
def book_flight(flight_id: str) -> str:
    """Book a flight."""
    return recorded("book_flight", {"flight_id": flight_id}, "booked ABC123456")


@function_tool
def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    s.tool("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


@function_tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return recorded("get_weather", {"city": city}, {"Paris": "12C rain", "Tokyo": "18C sun"}[city])


@function_tool
def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return recorded("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


@function_tool
def lookup(key: str) -> str:
    """Look up a key."""
    return recorded("lookup", {"key": key}, f"value-of-{key}")


class Hooks(RunHooks):
    """Counts the model calls the Runner makes and records handoffs (the SDK's own hooks, not the spans)."""

    def __init__(self) -> None:
        self.calls = 0  # model calls of the current agent's run
        self.handoffs = []

    async def on_llm_start(self, context, agent, system_prompt, input_items) -> None:
        self.calls += 1

    async def on_handoff(self, context, from_agent, to_agent) -> None:
        """A handoff ends the handing agent's run (no answer of its own); the new agent's run takes the request."""
        s.tool(f"transfer_to_{to_agent.name}", {}, None)  # the SDK runs the handoff tool itself
        self.handoffs.append(s.runs[-1]["tool_calls"][-1])
        s.finish(None, "ok", self.calls)
        s.run(to_agent.name, s.runs[-1]["input"])
        self.calls = 0


travel_agent = Agent(
    name="travel_agent",
    instructions="You are a travel assistant.",
    model=model,
    tools=[search_flights, book_flight, charge_card, get_weather, delete_account, lookup],
)
booking_agent = Agent(
    name="booking_agent", instructions="You are a travel booking assistant.", model=model, tools=[book_flight]
)
triage_agent = Agent(name="triage_agent", instructions="Route travel requests.", model=model, handoffs=[booking_agent])


async def run(agent: Agent, request: str) -> None:
    s.run(agent.name, request)
    hooks = Hooks()
    try:
        result = await Runner.run(agent, request, hooks=hooks)
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        s.finish(None, "error", hooks.calls)
        return
    outputs = [item.raw_item["output"] for item in result.new_items if item.type == "handoff_output_item"]
    for call, output in zip(hooks.handoffs, outputs, strict=True):  # what the handoff tool answered the model
        call["result"] = output
    s.finish(result.final_output, "ok", hooks.calls)


SEVEN = [tool("lookup", {"key": f"k{i}"}) for i in range(1, 8)]
SCENARIOS = {
    "happy": [(travel_agent, "Book me the cheapest flight from SFO to JFK tomorrow.")],
    "forbidden": [(travel_agent, "Please close my account, user 42.")],
    "tool_error": [(travel_agent, "Charge my card 120 dollars for the upgrade.")],
    "many_calls": [(travel_agent, "Look up keys k1 to k7 and summarise them.")],
    "parallel": [(travel_agent, "What's the weather in Paris and Tokyo?")],
    "agent_error": [(travel_agent, "Book me a flight to Mars.")],
    "two_runs": [(travel_agent, "Weather in Paris?"), (travel_agent, "When does order 7 ship?")],
    "handoff": [(triage_agent, "I need to book flight UA123.")],
}
REPLIES = {
    "happy": [
        tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
        tool("book_flight", {"flight_id": "UA123"}),
        text("Your flight UA123 is booked. Confirmation: ABC123456"),
    ],
    "forbidden": [tool("delete_account", {"user_id": "42"}), text("Your account has been deleted.")],
    "tool_error": [
        tool("charge_card", {"amount": 120}),
        text("Sorry, your card was declined. Please try another card."),
    ],
    "many_calls": [*SEVEN, text("All seven keys were found.")],
    "parallel": [
        tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
        text("Paris: 12C and rain. Tokyo: 18C and sunny."),
    ],
    "agent_error": [
        tool("search_flights", {"origin": "SFO", "destination": "MARS"}),
        failure(500, "model backend unavailable"),
    ],
    "two_runs": [
        tool("get_weather", {"city": "Paris"}),
        text("It is 12C and raining in Paris."),
        tool("lookup", {"key": "order-7"}),
        text("Order 7 ships on Monday."),
    ],
    "handoff": [
        tool("transfer_to_booking_agent", {}),
        tool("book_flight", {"flight_id": "UA123"}),
        text("Booked UA123. Confirmation: ABC123456"),
    ],
}


async def main() -> None:
    global s
    for name, runs in SCENARIOS.items():
        with Scenario(name, REPLIES[name]) as s:
            with tracer.start_as_current_span("handle_request"):
                for agent, request in runs:
                    await run(agent, request)
            provider.force_flush()


asyncio.run(main())
