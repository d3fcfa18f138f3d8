"""Microsoft Agent Framework's own GenAI spans: an Agent on OpenAIChatCompletionClient with function tools.

Agent Framework instruments itself (on by default) and writes through the global OpenTelemetry
providers, which this script sets to SDK providers exporting OTLP/HTTP protobuf (traces, and the log
records that carry its message events). Message content is turned on the documented way,
ENABLE_SENSITIVE_DATA=true, unless the `agent-framework-default` source runs this file with
DEFAULT_SETTINGS=True. The handoff scenario gives one agent another agent as a tool (Agent.as_tool).
"""

import asyncio
import os

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
if not DEFAULT_SETTINGS:
    os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from agent_framework import Agent, chat_middleware, function_middleware  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from client import Scenario, failure, text, tool, tools  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

resource = Resource.create({"service.name": "travel-service"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
log_provider = LoggerProvider(resource=resource)
log_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter()))
_logs.set_logger_provider(log_provider)
tracer = trace.get_tracer("travel-service")

S: Scenario  # the scenario being captured; the tools record into it
CALLS: dict[str, int] = {}  # model calls each agent made, counted by its chat middleware


def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    result = f"UA123 09:00 $320 ({origin}-{destination})"
    S.tool("search_flights", {"origin": origin, "destination": destination}, result)
    return result


def book_flight(flight_id: str) -> str:
    """Book a flight by id."""
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


def counter(agent_name: str):
    @chat_middleware
    async def count(context, call_next):
        CALLS[agent_name] = CALLS.get(agent_name, 0) + 1
        await call_next()

    return count


@function_middleware
async def inner_run(context, call_next):
    """Ground truth of the weather_agent run behind concierge's tool call, listed after the outer run."""
    arguments = dict(context.arguments)
    S.run("weather_agent", arguments["request"])
    await call_next()
    result = context.result  # the wrapped agent's answer, as a list of Content
    result = result if isinstance(result, str) else "".join(c.text or "" for c in result)
    S.finish(result, "ok", CALLS.pop("weather_agent", 0))
    INNER.append(S.runs.pop())
    S.tool(context.function.name, arguments, result)


def client() -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])


INNER: list[dict] = []
travel_agent = Agent(
    client(),
    "You are a travel assistant.",
    name="travel_agent",
    tools=[search_flights, book_flight, charge_card, get_weather, delete_account],
    middleware=[counter("travel_agent")],
)
weather_agent = Agent(
    client(),
    "You answer weather questions.",
    name="weather_agent",
    description="Answers weather questions.",
    tools=[get_weather],
    middleware=[counter("weather_agent")],
)
concierge = Agent(
    client(),
    "Delegate weather questions to weather_agent.",
    name="concierge",
    tools=[weather_agent.as_tool(arg_name="request")],
    middleware=[counter("concierge"), inner_run],
)


async def run(agent: Agent, request: str) -> str | None:
    """One agent run; records the ground truth of the run."""
    S.run(agent.name, request)
    CALLS.clear()
    try:
        response = await agent.run(request)
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        S.finish(None, "error", CALLS.get(agent.name, 0))
        return None
    S.finish(response.text, "ok", CALLS.get(agent.name, 0))
    return response.text


LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]
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
            "Please close my account, user u-42.",
            [
                tool("delete_account", {"user_id": "u-42"}),
                text("Your account has been deleted."),
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
            "Compare flights from SFO to seven cities.",
            [
                *[
                    tool("search_flights", {"origin": "SFO", "destination": d})
                    for d in ["JFK", "LAX", "ORD", "SEA", "BOS", "MIA", "DEN"]
                ],
                text("The cheapest is UA123 at $320 to every city."),
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
        ("What's the weather in Paris?", [tool("get_weather", {"city": "Paris"}), text("12C and rain in Paris.")]),
        ("And in Tokyo?", [tool("get_weather", {"city": "Tokyo"}), text("18C and sunny in Tokyo.")]),
    ],
}
if DEFAULT_SETTINGS:
    SCENARIOS = {k: SCENARIOS[k] for k in ("happy", "tool_error", "agent_error")}


async def main() -> None:
    global S
    for name, runs in SCENARIOS.items():
        with Scenario(name, [r for _, replies in runs for r in replies]) as S:
            with tracer.start_as_current_span("handle_request"):
                for request, _ in runs:
                    await run(travel_agent, request)
            if DEFAULT_SETTINGS:
                for truth in S.runs:
                    truth["lacks"] = LACKS
            provider.force_flush()
            log_provider.force_flush()
    if DEFAULT_SETTINGS:
        return
    replies = [
        tool("weather_agent", {"request": "Weather in Paris"}),
        tool("get_weather", {"city": "Paris"}),
        text("It is 12C with rain in Paris."),
        text("Paris: 12C and rain."),
    ]
    with Scenario("handoff", replies) as S:
        with tracer.start_as_current_span("handle_request"):
            await run(concierge, "What's the weather in Paris?")
        S.runs.extend(INNER)
        provider.force_flush()
        log_provider.force_flush()


asyncio.run(main())
