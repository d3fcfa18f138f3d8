"""Agno agents (and a Team for the handoff) traced by openinference-instrumentation-agno.

A travel-assistant `Agent` with plain-function tools talks Chat Completions to the scripted model
through `OpenAIChat(base_url=...)`. OpenInference records message content by default, so this is the
content-on capture. Each scenario runs inside a `handle_request` span, as a web service would.
The handoff is a Team (coordinate mode): the leader's own `delegate_task_to_member` tool runs the member
agent; the member's input and the leader's calls come from the TeamRunOutput the framework returns. That call is
a delegation, so the request run records it as a handoff (leader -> the member it names), not as a tool call;
the member's own calls are the request's tool calls.
"""

import os

os.environ.setdefault("AGNO_TELEMETRY", "false")  # no anonymous usage pings

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.team import Team
from client import Scenario, failure, text, tool, tools
from openinference.instrumentation.agno import AgnoInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
AgnoInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

S: Scenario  # the scenario being captured; the tools record into it


def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    result = f"UA123 09:00 $320 ({origin}-{destination})"
    S.tool("search_flights", {"origin": origin, "destination": destination}, result)
    return result


def book_flight(flight_id: str) -> str:
    """Book a flight by its id."""
    S.tool("book_flight", {"flight_id": flight_id}, "booked ABC123456")
    return "booked ABC123456"


def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    S.tool("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


def get_weather(city: str) -> str:
    """Current weather in a city."""
    result = {"Paris": "12C rain", "Tokyo": "18C sunny"}[city]
    S.tool("get_weather", {"city": city}, result)
    return result


def delete_account(user_id: str) -> str:
    """Delete the user's account."""
    S.tool("delete_account", {"user_id": user_id}, "account deleted")
    return "account deleted"


def model() -> OpenAIChat:
    return OpenAIChat(id="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])


def travel_agent() -> Agent:
    return Agent(
        name="travel_agent",
        model=model(),
        tools=[search_flights, book_flight, charge_card, get_weather, delete_account],
        instructions="You are a travel assistant.",
        telemetry=False,
    )


def run_agent(request: str) -> None:
    """One agent run with its ground truth (a failed run answers None with status error)."""
    S.run("travel_agent", request)
    result = travel_agent().run(request)
    answered = sum(1 for m in result.messages or [] if m.role == "assistant")
    if result.status.value == "ERROR":  # the call that failed is a model call too
        S.finish(None, "error", answered + 1)
    else:
        S.finish(result.content, "ok", answered)


def run_team(request: str) -> None:
    """A Team leader delegates to a booking member (coordinate mode), then answers."""
    booker = Agent(
        id="booking_agent",
        name="booking_agent",
        model=model(),
        tools=[book_flight],
        instructions="You book flights.",
        telemetry=False,
    )
    team = Team(
        name="travel_team",
        model=model(),
        members=[booker],
        telemetry=False,
        instructions="Delegate bookings to the booking agent.",
    )
    outer = S.run("travel_team", request)  # the request run: every agent's calls under it
    result = team.run(request)
    member = result.member_responses[0]
    calls = result.tools or []
    delegations = [t for t in calls if t.tool_name == "delegate_task_to_member"]  # the Team's own delegation tool
    outer["tool_calls"] = [
        {"name": t.tool_name, "arguments": t.tool_args, "result": t.result, "error": bool(t.tool_call_error)}
        for t in [*(t for t in calls if t not in delegations), *(member.tools or [])]
    ]
    outer["handoffs"] = [{"from": team.name, "to": t.tool_args["member_id"]} for t in delegations]
    answered = sum(1 for m in [*(result.messages or []), *(member.messages or [])] if m.role == "assistant")
    outer.update(output=result.content, status="ok", llm_calls=answered)


FLIGHT = "Book me the cheapest flight from SFO to JFK tomorrow."
SCENARIOS = {
    "happy": (
        [FLIGHT],
        [
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "forbidden": (
        ["Please close my account, user 42."],
        [
            tool("delete_account", {"user_id": "42"}),
            text("Your account has been deleted."),
        ],
    ),
    "tool_error": (
        ["Charge my card 120 dollars for the upgrade."],
        [
            tool("charge_card", {"amount": 120}),
            text("Sorry, your card was declined."),
        ],
    ),
    "many_calls": (
        ["Compare the weather in Paris and Tokyo, then book the cheapest SFO-JFK flight."],
        [
            tool("get_weather", {"city": "Paris"}),
            tool("get_weather", {"city": "Tokyo"}),
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("search_flights", {"origin": "SFO", "destination": "EWR"}),
            tool("search_flights", {"origin": "OAK", "destination": "JFK"}),
            tool("get_weather", {"city": "Paris"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Paris 12C rain, Tokyo 18C sunny. Booked UA123, confirmation ABC123456."),
        ],
    ),
    "parallel": (
        ["What's the weather in Paris and Tokyo?"],
        [
            tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
            text("Paris: 12C and rain. Tokyo: 18C and sunny."),
        ],
    ),
    "agent_error": (
        ["Book me a flight to Mars."],
        [
            tool("search_flights", {"origin": "SFO", "destination": "MARS"}),
            failure(500, "model backend unavailable"),
        ],
    ),
    "two_runs": (
        ["What's the weather in Paris?", "And in Tokyo?"],
        [
            tool("get_weather", {"city": "Paris"}),
            text("Paris: 12C and rain."),
            tool("get_weather", {"city": "Tokyo"}),
            text("Tokyo: 18C and sunny."),
        ],
    ),
}

for name, (requests, replies) in SCENARIOS.items():
    with Scenario(name, replies) as S:
        with tracer.start_as_current_span("handle_request"):
            for request in requests:
                run_agent(request)
        provider.force_flush()

with Scenario(
    "handoff",
    [
        tool("delegate_task_to_member", {"member_id": "booking_agent", "task": "Book flight UA123."}),
        tool("book_flight", {"flight_id": "UA123"}),
        text("Booked UA123. Confirmation: ABC123456"),
        text("Your flight UA123 is booked. Confirmation: ABC123456"),
    ],
    nested_runs_allowed=True,
    note="The request run: what the user asked and got, with every agent's calls under it; the leader's "
    "delegation to its member is a handoff, not a tool call. Each agent's own run is also reported, nested: "
    "travel_team (2 model call(s), tool calls ['delegate_task_to_member']) and booking_agent (2 model call(s), "
    "tool calls ['book_flight']).",
) as S:
    with tracer.start_as_current_span("handle_request"):
        run_team("I need to book flight UA123.")
    provider.force_flush()
