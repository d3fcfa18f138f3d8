"""pydantic-ai with its own instrumentation (`Agent.instrument_all()`, default InstrumentationSettings).

The OpenAI chat-completions model talks to the scripted model at OPENAI_BASE_URL; spans go through
an OTel SDK TracerProvider to the OTLP/HTTP exporter. Content is on by default (include_content).
Each scenario is wrapped in a `handle_request` span. The subagent scenario is agent delegation:
travel_agent's tool `ask_booking_agent` runs booking_agent, a separate agent run.
"""

import asyncio
import os

from client import Scenario, failure, text, tool, tools
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities import Hooks
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
Agent.instrument_all()
tracer = trace.get_tracer("travel-service")
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))
s: Scenario  # the scenario being captured


def counted(agent_name: str) -> Hooks:
    """A hook that counts the agent's model requests into the ground truth of its current run."""
    hooks = Hooks()

    @hooks.on.before_model_request
    async def count(ctx, request_context):
        current[agent_name]["llm_calls"] += 1
        return request_context

    return hooks


current: dict[str, dict] = {}  # agent name -> ground truth of its run in progress
travel_agent = Agent(
    model, name="travel_agent", instructions="You are a travel assistant.", capabilities=[counted("travel_agent")]
)
booking_agent = Agent(
    model,
    name="booking_agent",
    instructions="You are a travel booking assistant.",
    capabilities=[counted("booking_agent")],
)


def record(agent, name, arguments, result=None, error=False):
    current[agent]["tool_calls"].append(
        {"name": name, "arguments": arguments, "result": None if error else result, "error": error}
    )
    return result


@travel_agent.tool_plain
async def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return record("travel_agent", "search_flights", {"origin": origin, "destination": destination}, "UA123 09:00 $320")


@travel_agent.tool_plain
async def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    record("travel_agent", "charge_card", {"amount": amount}, error=True)
    raise ModelRetry("card declined")  # pydantic-ai's way for a tool to report a failure to the model


@travel_agent.tool_plain
async def get_weather(city: str) -> str:
    """Current weather in a city."""
    return record("travel_agent", "get_weather", {"city": city}, {"Paris": "12C rain", "Tokyo": "18C sun"}[city])


@travel_agent.tool_plain
async def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return record("travel_agent", "delete_account", {"user_id": user_id}, f"account {user_id} deleted")


@travel_agent.tool_plain
async def lookup(key: str) -> str:
    """Look up a key."""
    return record("travel_agent", "lookup", {"key": key}, f"value-of-{key}")


@travel_agent.tool_plain
async def book_flight(flight_id: str) -> str:
    """Book a flight."""
    return record("travel_agent", "book_flight", {"flight_id": flight_id}, "booked ABC123456")


@booking_agent.tool_plain(name="book_flight")
async def booking_book_flight(flight_id: str) -> str:
    """Book a flight."""
    return record("booking_agent", "book_flight", {"flight_id": flight_id}, "booked ABC123456")


@travel_agent.tool_plain
async def ask_booking_agent(request: str) -> str:
    """Hand a booking request to the booking agent and return its answer."""
    record("travel_agent", "ask_booking_agent", {"request": request})
    call = current["travel_agent"]["tool_calls"][-1]  # its result is the inner run's answer
    answer = await run(booking_agent, request)
    call["result"] = answer
    return answer


async def run(agent: Agent, request: str) -> str | None:
    truth = s.run(agent.name, request)
    truth.update(llm_calls=0)
    current[agent.name] = truth
    try:
        result = await agent.run(request)
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        truth.update(output=None, status="error")
        return None
    truth.update(output=result.output, status="ok")
    return result.output


SCENARIOS = {
    "happy": ["Book me the cheapest flight from SFO to JFK tomorrow."],
    "forbidden": ["Please close my account, user 42."],
    "tool_error": ["Charge my card 120 dollars for the upgrade."],
    "many_calls": ["Look up keys k1 to k7 and summarise them."],
    "parallel": ["What's the weather in Paris and Tokyo?"],
    "agent_error": ["Book me a flight to Mars."],
    "two_runs": ["Weather in Paris?", "When does order 7 ship?"],
    "subagent": ["I need to book flight UA123."],
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
    "many_calls": [*[tool("lookup", {"key": f"k{i}"}) for i in range(1, 8)], text("All seven keys were found.")],
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
    "subagent": [
        tool("ask_booking_agent", {"request": "Book flight UA123."}),
        tool("book_flight", {"flight_id": "UA123"}),  # booking_agent's turns
        text("Booked UA123. Confirmation: ABC123456"),
        text("Your flight UA123 is booked. Confirmation: ABC123456"),  # travel_agent's answer
    ],
}


async def main() -> None:
    global s
    for name, requests in SCENARIOS.items():
        with Scenario(name, REPLIES[name]) as s:
            with tracer.start_as_current_span("handle_request"):
                for request in requests:
                    await run(travel_agent, request)
            provider.force_flush()


asyncio.run(main())
