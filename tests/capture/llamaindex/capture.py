"""LlamaIndex FunctionAgent / AgentWorkflow traced by openinference-instrumentation-llama-index.

A travel assistant (`FunctionAgent`, streaming, the default) talks Chat Completions to the scripted model
through `OpenAILike`; the `handoff` scenario is a two-agent `AgentWorkflow` where `travel_agent` hands
over to `booking_agent` (`can_handoff_to`). OpenInference records message content by default. Each
scenario is wrapped in a `handle_request` span, as a web service would.

Ground truth: the tools record what they received and returned; the number of model calls is the number
of `AgentInput` events the workflow streamed (one per model call); the handoff is taken from the workflow's own
`ToolCallResult` event of its `handoff` tool, which the framework runs itself, and recorded as the control
transfer it is (`travel_agent` -> the agent it names), not as a tool call of the request.
"""

import asyncio

from client import Scenario, failure, text, tool, tools
from llama_index.core.agent.workflow import AgentInput, AgentWorkflow, FunctionAgent, ToolCallResult
from llama_index.core.tools import FunctionTool
from llamaindex_llm import scripted_llm
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
LlamaIndexInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

llm = scripted_llm()
current: Scenario | None = None  # the scenario whose run the tools record into


def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    result = f"UA123 09:00 $320 ({origin}-{destination})"
    current.tool("search_flights", {"origin": origin, "destination": destination}, result)
    return result


def book_flight(flight_id: str) -> str:
    """Book a flight by its id."""
    result = f"booked {flight_id}, confirmation ABC123456"
    current.tool("book_flight", {"flight_id": flight_id}, result)
    return result


def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    current.tool("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


def get_weather(city: str) -> str:
    """Current weather in a city."""
    result = {"Paris": "12C rain", "Tokyo": "18C sunny", "London": "9C cloudy"}.get(city, "20C clear")
    current.tool("get_weather", {"city": city}, result)
    return result


def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    result = f"account {user_id} deleted"
    current.tool("delete_account", {"user_id": user_id}, result)
    return result


TOOLS = [
    FunctionTool.from_defaults(fn) for fn in (search_flights, book_flight, charge_card, get_weather, delete_account)
]
travel_agent = FunctionAgent(
    name="travel_agent",
    description="Travel assistant.",
    tools=TOOLS,
    llm=llm,
    system_prompt="You are a travel assistant.",
)


def workflow() -> AgentWorkflow:
    """travel_agent triages and hands booking over to booking_agent."""
    triage = FunctionAgent(
        name="travel_agent",
        description="Travel assistant that triages requests.",
        llm=llm,
        tools=[FunctionTool.from_defaults(search_flights)],
        can_handoff_to=["booking_agent"],
        system_prompt="You are a travel assistant. Hand bookings over to booking_agent.",
    )
    booking = FunctionAgent(
        name="booking_agent",
        description="Books flights.",
        llm=llm,
        tools=[FunctionTool.from_defaults(book_flight)],
        system_prompt="You book flights.",
    )
    return AgentWorkflow(agents=[triage, booking], root_agent="travel_agent")


async def run(s: Scenario, agent, request: str) -> None:
    """One agent run (`agent.run(user_msg=...)`) and its ground truth."""
    s.run("travel_agent", request)
    llm_calls = 0
    handler = agent.run(user_msg=request)
    try:
        async for event in handler.stream_events():
            if isinstance(event, AgentInput):
                llm_calls += 1
            elif isinstance(event, ToolCallResult) and event.tool_name == "handoff":
                handoffs = s.runs[-1].setdefault("handoffs", [])
                handoffs.append({"from": "travel_agent", "to": event.tool_kwargs["to_agent"]})
        result = await handler
    except Exception as exc:  # the run failed
        print(f"   run failed: {type(exc).__name__}: {exc}")
        s.finish(None, "error", llm_calls)
        return
    s.finish(result.response.content, "ok", llm_calls)


SCENARIOS = {
    "happy": [
        (
            "Book me the cheapest flight from SFO to JFK tomorrow.",
            [
                tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
                tool("book_flight", {"flight_id": "UA123"}),
                text("Your flight UA123 is booked. Confirmation: ABC123456"),
            ],
        )
    ],
    "forbidden": [
        (
            "Please close my account, user id u-42.",
            [
                tool("delete_account", {"user_id": "u-42"}),
                text("Your account u-42 has been deleted."),
            ],
        )
    ],
    "tool_error": [
        (
            "Charge my card 120 dollars for the upgrade.",
            [
                tool("charge_card", {"amount": 120}),
                text("Sorry, your card was declined."),
            ],
        )
    ],
    "many_calls": [
        (
            "Check the weather in seven cities for my trip.",
            [
                *[
                    tool("get_weather", {"city": c})
                    for c in ("Paris", "Tokyo", "London", "Rome", "Oslo", "Lima", "Cairo")
                ],
                text("Paris 12C rain, Tokyo 18C sunny, London 9C cloudy, the rest 20C clear."),
            ],
        )
    ],
    "parallel": [
        (
            "What's the weather in Paris and Tokyo?",
            [
                tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
                text("Paris: 12C and rain. Tokyo: 18C and sunny."),
            ],
        )
    ],
    "agent_error": [
        (
            "Book me a flight to Mars.",
            [
                tool("search_flights", {"origin": "SFO", "destination": "MARS"}),
                failure(500, "model backend unavailable"),
            ],
        )
    ],
    "two_runs": [
        ("What's the weather in Paris?", [tool("get_weather", {"city": "Paris"}), text("Paris: 12C and rain.")]),
        ("And in Tokyo?", [tool("get_weather", {"city": "Tokyo"}), text("Tokyo: 18C and sunny.")]),
    ],
    "handoff": [
        (
            "Find and book a flight from SFO to JFK.",
            [
                tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
                tool("handoff", {"to_agent": "booking_agent", "reason": "The user wants to book UA123."}),
                tool("book_flight", {"flight_id": "UA123"}),
                text("Booked UA123, confirmation ABC123456."),
            ],
        )
    ],
}


async def main() -> None:
    global current
    for name, runs in SCENARIOS.items():
        replies = [reply for _, script in runs for reply in script]
        with Scenario(name, replies) as s:
            current = s
            with tracer.start_as_current_span("handle_request"):
                for request, _ in runs:
                    await run(s, workflow() if name == "handoff" else travel_agent, request)
            provider.force_flush()


asyncio.run(main())
