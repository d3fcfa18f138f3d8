"""Strands Agents with its default telemetry (StrandsTelemetry + OTLP/HTTP exporter).

Its OpenAI model provider streams chat completions from the scripted model at OPENAI_BASE_URL
(client_args base_url). Message content is on by default (span events). Each scenario is wrapped
in a `handle_request` span from a tracer of the same provider. The subagent scenario is
agents-as-tools: travel_agent's tool `ask_booking_agent` invokes booking_agent, a separate run.
"""

import asyncio
import os

from client import Scenario, failure, text, tool, tools
from opentelemetry import trace
from strands import Agent
from strands import tool as strands_tool
from strands.hooks import BeforeModelCallEvent
from strands.models.openai import OpenAIModel
from strands.telemetry import StrandsTelemetry

os.environ.setdefault("OTEL_SERVICE_NAME", "travel-service")  # read by StrandsTelemetry's resource
telemetry = StrandsTelemetry().setup_otlp_exporter()  # OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
tracer = trace.get_tracer("travel-service")
s: Scenario  # the scenario being captured
current: dict[str, dict] = {}  # agent name -> ground truth of its run in progress


def model() -> OpenAIModel:
    client_args = {"base_url": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]}
    return OpenAIModel(client_args=client_args, model_id="gpt-4o-mini")


def record(agent, name, arguments, result=None, error=False):
    current[agent]["tool_calls"].append(
        {"name": name, "arguments": arguments, "result": None if error else result, "error": error}
    )
    return result


@strands_tool
async def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return record("travel_agent", "search_flights", {"origin": origin, "destination": destination}, "UA123 09:00 $320")


@strands_tool
async def book_flight(flight_id: str) -> str:
    """Book a flight."""
    return record("travel_agent", "book_flight", {"flight_id": flight_id}, "booked ABC123456")


@strands_tool(name="book_flight")
async def booking_book_flight(flight_id: str) -> str:
    """Book a flight."""
    return record("booking_agent", "book_flight", {"flight_id": flight_id}, "booked ABC123456")


@strands_tool
async def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    record("travel_agent", "charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


@strands_tool
async def get_weather(city: str) -> str:
    """Current weather in a city."""
    return record("travel_agent", "get_weather", {"city": city}, {"Paris": "12C rain", "Tokyo": "18C sun"}[city])


@strands_tool
async def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return record("travel_agent", "delete_account", {"user_id": user_id}, f"account {user_id} deleted")


@strands_tool
async def lookup(key: str) -> str:
    """Look up a key."""
    return record("travel_agent", "lookup", {"key": key}, f"value-of-{key}")


@strands_tool
async def ask_booking_agent(request: str) -> str:
    """Hand a booking request to the booking agent and return its answer."""
    record("travel_agent", "ask_booking_agent", {"request": request})
    call = current["travel_agent"]["tool_calls"][-1]  # its result is the inner run's answer
    call["result"] = await run(agents["booking_agent"], request)
    return call["result"]


def make_agent(name: str, prompt: str, agent_tools: list) -> Agent:
    agent = Agent(name=name, model=model(), system_prompt=prompt, tools=agent_tools, callback_handler=None)

    def count(event: BeforeModelCallEvent) -> None:  # the agent's own hook, not the spans
        current[name]["llm_calls"] += 1

    agent.hooks.add_callback(BeforeModelCallEvent, count)
    return agent


agents: dict[str, Agent] = {}


def fresh_agents() -> None:
    """New agents for each scenario: a Strands Agent keeps its conversation across invocations."""
    agents["travel_agent"] = make_agent(
        "travel_agent",
        "You are a travel assistant.",
        [search_flights, book_flight, charge_card, get_weather, delete_account, lookup, ask_booking_agent],
    )
    agents["booking_agent"] = make_agent("booking_agent", "You are a travel booking assistant.", [booking_book_flight])


async def run(agent: Agent, request: str) -> str | None:
    truth = s.run(agent.name, request)
    truth.update(llm_calls=0)
    current[agent.name] = truth
    try:
        result = await agent.invoke_async(request)
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        truth.update(output=None, status="error")
        return None
    answer = "".join(block["text"] for block in result.message["content"] if "text" in block)
    truth.update(output=answer, status="ok")
    return answer


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
        fresh_agents()  # two_runs: both requests go to the same agent, as one conversation
        with Scenario(name, REPLIES[name]) as s:
            with tracer.start_as_current_span("handle_request"):
                for request in requests:
                    await run(agents["travel_agent"], request)
            telemetry.tracer_provider.force_flush()


asyncio.run(main())
