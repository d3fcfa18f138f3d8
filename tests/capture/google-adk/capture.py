"""Google ADK's own GenAI spans: an LlmAgent on LiteLLM (chat completions) with function tools.

ADK writes its spans through the global OpenTelemetry TracerProvider, which this script sets to an SDK
provider exporting OTLP/HTTP protobuf. Message content is turned on the documented way,
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY, unless the `google-adk-default` source runs
this file with DEFAULT_SETTINGS=True. The raising tool is recovered by the agent's on_tool_error_callback
(ADK otherwise aborts the run). `handoff` uses an agent as a tool (AgentTool, a separate inner
invocation); `subagent` uses sub_agents, where the model calls ADK's transfer_to_agent and the sub-agent
answers within the same invocation.
"""

import asyncio
import os

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
if not DEFAULT_SETTINGS:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

from adk_runner import final_answer  # noqa: E402
from client import Scenario, failure, text, tool, tools  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.lite_llm import LiteLlm  # noqa: E402
from google.adk.tools.agent_tool import AgentTool  # noqa: E402
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
CALLS: dict[str, int] = {}  # model calls each agent made (counted by before_model_callback)


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


def count_call(callback_context, llm_request):
    CALLS[callback_context.agent_name] = CALLS.get(callback_context.agent_name, 0) + 1


INNER: list[dict] = []  # ground truth of the weather_agent runs started by concierge's tool


def inner_starts(tool, args, tool_context):
    S.run("weather_agent", args["request"])


def inner_ends(tool, args, tool_context, tool_response):
    S.finish(tool_response, "ok", CALLS.pop("weather_agent", 0))
    INNER.append(S.runs.pop())  # listed after the outer run
    S.tool(tool.name, args, tool_response)


def recover(tool, args, tool_context, error):
    return {"error": str(error)}


def model():
    return LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"])


travel_agent = LlmAgent(
    name="travel_agent",
    model=model(),
    instruction="You are a travel assistant.",
    tools=[search_flights, book_flight, charge_card, get_weather, delete_account],
    before_model_callback=count_call,
    on_tool_error_callback=recover,
)
weather_agent = LlmAgent(
    name="weather_agent",
    model=model(),
    instruction="You answer weather questions.",
    description="Answers weather questions.",
    tools=[get_weather],
    before_model_callback=count_call,
)
concierge = LlmAgent(
    name="concierge",
    model=model(),
    instruction="Delegate weather questions to weather_agent.",
    tools=[AgentTool(agent=weather_agent)],
    before_model_callback=count_call,
    before_tool_callback=inner_starts,
    after_tool_callback=inner_ends,
)


def transferred(tool, args, tool_context, tool_response):
    """front_desk's transfer_to_agent call, as it ran (ADK's own tool, so recorded by a callback)."""
    S.tool(tool.name, args, None if tool_response is None else str(tool_response))


def desk_starts(callback_context):
    """The sub-agent's run starts on the user's request (its ground truth follows front_desk's)."""
    S.run("weather_desk", callback_context.user_content.parts[0].text)


front_desk = LlmAgent(
    name="front_desk",
    model=model(),
    instruction="Transfer weather questions to weather_desk.",
    sub_agents=[
        LlmAgent(
            name="weather_desk",
            model=model(),
            instruction="You answer weather questions.",
            description="Answers weather questions.",
            tools=[get_weather],
            before_model_callback=count_call,
            before_agent_callback=desk_starts,
        )
    ],
    before_model_callback=count_call,
    after_tool_callback=transferred,
)


async def run(agent: LlmAgent, request: str) -> str | None:
    """One agent run through an InMemoryRunner; records the ground truth of the run."""
    S.run(agent.name, request)
    CALLS.clear()
    try:
        answer = await final_answer(agent, request, "travel", "u1")
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        S.finish(None, "error", CALLS.get(agent.name, 0))
        return None
    S.finish(answer, "ok", CALLS.get(agent.name, 0))
    return answer


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
    if not DEFAULT_SETTINGS:
        await handoff()


async def handoff() -> None:
    """concierge calls weather_agent as a tool: the inner run is its own ADK invocation."""
    global S
    request = "What's the weather in Paris?"
    replies = [
        tool("weather_agent", {"request": "Weather in Paris"}),
        tool("get_weather", {"city": "Paris"}),
        text("It is 12C with rain in Paris."),
        text("Paris: 12C and rain."),
    ]
    with Scenario("handoff", replies) as S:
        with tracer.start_as_current_span("handle_request"):
            await run(concierge, request)
        S.runs.extend(INNER)
        provider.force_flush()
        log_provider.force_flush()
    await subagent()


async def subagent() -> None:
    """front_desk transfers to its sub-agent weather_desk, which answers the user."""
    global S
    request = "What's the weather in Tokyo?"
    replies = [
        tool("transfer_to_agent", {"agent_name": "weather_desk"}),
        tool("get_weather", {"city": "Tokyo"}),
        text("It is 18C and sunny in Tokyo."),
    ]
    with Scenario("subagent", replies) as S:
        with tracer.start_as_current_span("handle_request"):
            answer = await run(front_desk, request)
        outer = next(r for r in S.runs if r["agent_name"] == "front_desk")
        inner = next(r for r in S.runs if r["agent_name"] == "weather_desk")
        outer.update(
            output=None, status="ok", llm_calls=CALLS.get("front_desk", 0)
        )  # it handed over: no answer of its own
        inner.update(output=answer, status="ok", llm_calls=CALLS.get("weather_desk", 0))
        S.runs[:] = [outer, inner]
        provider.force_flush()
        log_provider.force_flush()


asyncio.run(main())
