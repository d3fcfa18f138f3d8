"""OpenAI Agents SDK (chat-completions model) traced by Pydantic Logfire's `logfire.instrument_openai_agents()`.

Logfire wraps the SDK's trace provider: each SDK span becomes a Logfire span (`OpenAI Agents trace: ...`,
`Agent run: ...`, `Chat completion with ...`, `Function: ...`, `Handoff: ...`) exported to
OTEL_EXPORTER_OTLP_ENDPOINT by Logfire itself (`send_to_logfire=False`, OTLP/HTTP protobuf); the SDK's own
processors (its upload to the OpenAI platform) are removed with `set_trace_processors([])`. Each scenario is
one request wrapped in a `handle_request` span; `two_runs` serves two requests. Multi-agent scenarios:
`handoff` (triage_agent hands over to booking_agent) and `agent_as_tool` (orchestrator_agent calls
booking_agent through `booking_agent.as_tool(...)` and then answers). Their ground truth is the request run:
the entry agent, the user's request, the answer the user got, every agent's model calls and non-transfer tool
calls in the order they started, and the handoffs; each agent's own run is described in the scenario's note.

Run as ../logfire-openai-agents-redacted/capture.py (SCRUBBED=True), happy, tool_error and agent_error are
captured with Logfire's scrubbing hiding content; those runs list in `lacks` what the trace cannot carry.
The ground truth comes from the SDK's RunHooks and from what the tools receive and return, never the spans.
"""

import asyncio

import logfire
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
from agents_hooks import Hooks
from client import Scenario, failure, text, tool, tools
from openai import AsyncOpenAI

SCRUBBED = globals().get("SCRUBBED", False)
# Keys whose values Logfire's scrubber replaces in the redacted capture: the model calls' messages, the tool
# calls' input and output, the run's request.
SCRUB_PATTERNS = ["messages", "input", "output"]
SCRUBBED_LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]

logfire.configure(
    service_name="travel-service",
    send_to_logfire=False,
    console=False,
    metrics=False,
    scrubbing=logfire.ScrubbingOptions(extra_patterns=SCRUB_PATTERNS) if SCRUBBED else None,
)
logfire.instrument_openai_agents()
set_trace_processors([])  # the SDK's own export to the OpenAI platform: not wanted, and unreachable here
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())
s: Scenario  # the scenario being captured; the tools record into its request run
AGENT_TOOL = "booking_specialist"  # booking_agent called as a tool


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


def team(hooks: Hooks) -> dict[str, Agent]:
    """The agents of one request; the booking agent's tool form reports its nested run to the same hooks."""
    booking = Agent(name="booking_agent", instructions="You book flights.", model=model, tools=[book_flight])
    booking_tool = booking.as_tool(
        tool_name=AGENT_TOOL, tool_description="Ask the booking specialist to book a flight.", hooks=hooks
    )
    orchestrator = Agent(
        name="orchestrator_agent",
        instructions="You answer travellers, using the booking specialist for bookings.",
        model=model,
        tools=[booking_tool],
    )
    triage = Agent(name="triage_agent", instructions="Route travel requests.", model=model, handoffs=[booking])
    travel = Agent(
        name="travel_agent",
        instructions="You are a travel assistant.",
        model=model,
        tools=[search_flights, book_flight, charge_card, get_weather, delete_account, lookup],
    )
    return {agent.name: agent for agent in (booking, orchestrator, triage, travel)}


async def run(agent_name: str, request: str, multi: bool) -> None:
    request_run = s.run(agent_name, request)
    hooks = Hooks(request_run, AGENT_TOOL)
    try:
        result = await Runner.run(team(hooks)[agent_name], request, hooks=hooks)
        output, status = result.final_output, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(hooks.calls.values()), lacks=SCRUBBED_LACKS if SCRUBBED else None)
    if multi:  # each agent's own run is reported too, nested under the request run
        request_run.setdefault("handoffs", [])
        s.spec.update(nested_runs_allowed=True, note=hooks.note(agent_name))


BOOK = "I need to book flight UA123."
BOOKED = "Booked UA123. Confirmation: ABC123456"
SEVEN = [tool("lookup", {"key": f"k{i}"}) for i in range(1, 8)]
SCENARIOS = {  # name: (agent, requests, replies)
    "happy": (
        "travel_agent",
        ["Book me the cheapest flight from SFO to JFK tomorrow."],
        [
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "forbidden": (
        "travel_agent",
        ["Please close my account, user 42."],
        [tool("delete_account", {"user_id": "42"}), text("Your account has been deleted.")],
    ),
    "tool_error": (
        "travel_agent",
        ["Charge my card 120 dollars for the upgrade."],
        [tool("charge_card", {"amount": 120}), text("Sorry, your card was declined. Please try another card.")],
    ),
    "many_calls": (
        "travel_agent",
        ["Look up keys k1 to k7 and summarise them."],
        [*SEVEN, text("All seven keys were found.")],
    ),
    "parallel": (
        "travel_agent",
        ["What's the weather in Paris and Tokyo?"],
        [
            tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
            text("Paris: 12C and rain. Tokyo: 18C and sunny."),
        ],
    ),
    "agent_error": (
        "travel_agent",
        ["Book me a flight to Mars."],
        [tool("search_flights", {"origin": "SFO", "destination": "MARS"}), failure(500, "model backend unavailable")],
    ),
    "two_runs": (
        "travel_agent",
        ["Weather in Paris?", "When does order 7 ship?"],
        [
            tool("get_weather", {"city": "Paris"}),
            text("It is 12C and raining in Paris."),
            tool("lookup", {"key": "order-7"}),
            text("Order 7 ships on Monday."),
        ],
    ),
    "handoff": (
        "triage_agent",
        [BOOK],
        [tool("transfer_to_booking_agent", {}), tool("book_flight", {"flight_id": "UA123"}), text(BOOKED)],
    ),
    "agent_as_tool": (
        "orchestrator_agent",
        [BOOK],
        [
            tool(AGENT_TOOL, {"input": "Book flight UA123."}),
            tool("book_flight", {"flight_id": "UA123"}),
            text(BOOKED),
            text("Your flight UA123 is booked; the confirmation is ABC123456."),
        ],
    ),
}
MULTI = ("handoff", "agent_as_tool")


async def main() -> None:
    global s
    names = ("happy", "tool_error", "agent_error") if SCRUBBED else SCENARIOS
    for name in names:
        agent, requests, replies = SCENARIOS[name]
        with Scenario(name, replies) as s:
            with logfire.span("handle_request"):
                for request in requests:
                    await run(agent, request, multi=name in MULTI)
            logfire.force_flush()


asyncio.run(main())
