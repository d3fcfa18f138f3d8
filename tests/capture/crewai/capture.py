"""CrewAI (one Agent with tools in a Crew with one Task) traced by openinference-instrumentation-crewai.

CrewAI 1.x sends `openai/<model>` to its native OpenAI provider (the openai SDK, Chat Completions at
`base_url`), not to LiteLLM, so the LLM calls are traced with openinference-instrumentation-openai, the
LLM instrumentor OpenInference's CrewAI docs pair with CrewAI 1.0+ on OpenAI. OpenInference records
message content by default, so this is the content-on capture. The handoff is CrewAI delegation: the
travel agent (allow_delegation=True) delegates to a booking agent of the same crew.

Model calls are counted from CrewAI's own LLMCallStartedEvent (the framework's record, not spans): in
agent_error CrewAI re-executes the failed task twice (Agent.max_retry_limit=2), so that run makes 4 calls.
many_calls uses seven distinct tool arguments because CrewAI answers a repeated identical call from its
tool cache without running the tool.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from client import Scenario, failure, text, tool, tools
from crewai import LLM, Agent, Crew, Task
from crewai.events import LLMCallStartedEvent, crewai_event_bus
from crewai.hooks import after_tool_call
from crewai.tools import tool as crew_tool
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
CrewAIInstrumentor().instrument(tracer_provider=provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

S: Scenario  # the scenario being captured; the tools record into it
LLM_CALLS: dict[str, int] = {}  # agent role -> model calls CrewAI started


@crewai_event_bus.on(LLMCallStartedEvent)
def _count(source, event):
    LLM_CALLS[event.agent_role] = LLM_CALLS.get(event.agent_role, 0) + 1


@after_tool_call
def _delegation(context):
    """CrewAI's own delegation tool cannot call S.tool itself: record what it received and returned."""
    if context.tool_name.startswith("delegate_work"):
        S.runs[0]["tool_calls"].append(
            {
                "name": context.tool_name,
                "arguments": dict(context.tool_input),
                "result": context.tool_result,
                "error": False,
            }
        )
    return None


@crew_tool("search_flights")
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    result = f"UA123 09:00 $320 ({origin}-{destination})"
    S.tool("search_flights", {"origin": origin, "destination": destination}, result)
    return result


@crew_tool("book_flight")
def book_flight(flight_id: str) -> str:
    """Book a flight by its id."""
    S.tool("book_flight", {"flight_id": flight_id}, "booked ABC123456")
    return "booked ABC123456"


@crew_tool("charge_card")
def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    S.tool("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


@crew_tool("get_weather")
def get_weather(city: str) -> str:
    """Current weather in a city."""
    result = {"Paris": "12C rain", "Tokyo": "18C sunny", "London": "9C fog"}[city]
    S.tool("get_weather", {"city": city}, result)
    return result


@crew_tool("delete_account")
def delete_account(user_id: str) -> str:
    """Delete the user's account."""
    S.tool("delete_account", {"user_id": user_id}, "account deleted")
    return "account deleted"


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])


def agent(role: str, tools_: list, **extra) -> Agent:
    return Agent(
        role=role, goal="Help travellers", backstory="You are a travel assistant.", llm=llm(), tools=tools_, **extra
    )


def run_crew(request: str) -> None:
    """One crew kickoff (one agent, one task) with its ground truth."""
    S.run("travel_agent", request)
    LLM_CALLS.clear()
    travel = agent("travel_agent", [search_flights, book_flight, charge_card, get_weather, delete_account])
    task = Task(description="{request}", expected_output="A short answer for the traveller.", agent=travel)
    try:
        result = Crew(agents=[travel], tasks=[task]).kickoff(inputs={"request": request})
        output, status = result.raw, "ok"
    except Exception:
        output, status = None, "error"
    crewai_event_bus.flush()
    S.finish(output, status, LLM_CALLS.get("travel_agent", 0))


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
        ["Compare the weather in Paris, Tokyo and London, then book the cheapest SFO-JFK flight."],
        [
            tool("get_weather", {"city": "Paris"}),
            tool("get_weather", {"city": "Tokyo"}),
            tool("get_weather", {"city": "London"}),
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("search_flights", {"origin": "SFO", "destination": "EWR"}),
            tool("search_flights", {"origin": "OAK", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Paris 12C rain, Tokyo 18C sunny, London 9C fog. Booked UA123, confirmation ABC123456."),
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


def run_delegation(request: str) -> None:
    """The travel agent delegates the booking to a coworker (its own agent run), then answers."""
    outer = S.run("travel_agent", request)
    inner = S.run("booking_agent", "")  # the coworker's tools record here while it runs
    LLM_CALLS.clear()
    travel = agent("travel_agent", [], allow_delegation=True)
    booker = agent("booking_agent", [book_flight])
    task = Task(description="{request}", expected_output="A short answer for the traveller.", agent=travel)
    result = Crew(agents=[travel, booker], tasks=[task]).kickoff(inputs={"request": request})
    crewai_event_bus.flush()
    delegation = outer["tool_calls"][0]
    inner.update(
        input=delegation["arguments"]["task"],
        output=delegation["result"],
        status="ok",
        llm_calls=LLM_CALLS.get("booking_agent", 0),
    )
    outer.update(output=result.raw, status="ok", llm_calls=LLM_CALLS.get("travel_agent", 0))


for name, (requests, replies) in SCENARIOS.items():
    with Scenario(name, replies) as S:
        with tracer.start_as_current_span("handle_request"):
            for request in requests:
                run_crew(request)
        provider.force_flush()

with Scenario(
    "handoff",
    [
        tool(
            "delegate_work_to_coworker",
            {"task": "Book flight UA123.", "context": "The traveller asked for UA123.", "coworker": "booking_agent"},
        ),
        tool("book_flight", {"flight_id": "UA123"}),
        text("Booked UA123. Confirmation: ABC123456"),
        text("Your flight UA123 is booked. Confirmation: ABC123456"),
    ],
) as S:
    with tracer.start_as_current_span("handle_request"):
        run_delegation("I need to book flight UA123.")
    provider.force_flush()
