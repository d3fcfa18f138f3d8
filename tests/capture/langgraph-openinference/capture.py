"""LangGraph agents (LangChain's `create_agent`, which builds a LangGraph graph) traced by OpenInference, or by
OpenLLMetry (Traceloop) when run as ../langgraph-traceloop/capture.py (INSTRUMENTATION="traceloop").

A travel assistant on `ChatOpenAI` (Chat Completions against OPENAI_BASE_URL) with five tools; a tool
error is turned into an error ToolMessage by a `wrap_tool_call` middleware, as the LangChain docs
advise, so the agent can recover. The handoff scenario is the documented sub-agent pattern: the
outer agent calls a tool that invokes a second `create_agent` graph. Each scenario is wrapped in a
`handle_request` span. Both instrumentations record message content by default (OpenLLMetry:
TRACELOOP_TRACE_CONTENT unset means true).
"""

from client import Scenario, failure, text, tool, tools
from langchain.agents import create_agent
from langchain.agents.middleware import wrap_tool_call
from langchain.tools import tool as lc_tool
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
if globals().get("INSTRUMENTATION", "openinference") == "traceloop":
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=provider)
else:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

s: Scenario  # the scenario being captured; the tools record what they really receive and return
WEATHER = {
    "Paris": "12C rain",
    "Tokyo": "18C sunny",
    "London": "9C cloudy",
    "Rome": "20C sunny",
    "Berlin": "7C windy",
    "Madrid": "22C clear",
    "Oslo": "2C snow",
}


def recorded(name, arguments, result):
    s.tool(name, arguments, result)
    return result


@lc_tool
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return recorded(
        "search_flights", {"origin": origin, "destination": destination}, f"UA123 09:00 $320 ({origin}-{destination})"
    )


@lc_tool
def book_flight(flight_id: str) -> str:
    """Book a flight by id."""
    return recorded("book_flight", {"flight_id": flight_id}, "booked ABC123456")


@lc_tool
def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    s.tool("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


@lc_tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return recorded("get_weather", {"city": city}, WEATHER[city])


@lc_tool
def delete_account(user_id: str) -> str:
    """Delete the user's account."""
    return recorded("delete_account", {"user_id": user_id}, "account deleted")


@wrap_tool_call
def tool_errors(request, handler):
    """Turn a raising tool into an error ToolMessage the model can read."""
    try:
        return handler(request)
    except Exception as exc:
        return ToolMessage(f"Tool error: {exc}", tool_call_id=request.tool_call["id"], status="error")


inner_runs: list[dict] = []  # ground truth of sub-agent runs, kept aside while the outer run goes on
model_calls: dict[str, int] = {}  # ground truth: model calls per agent in its current run


class CountCalls(BaseCallbackHandler):
    """Counts one agent's chat model calls (the OpenAI client's own HTTP retries are inside one call)."""

    def __init__(self, agent_name):
        self.agent_name = agent_name

    def on_chat_model_start(self, *args, **kwargs):
        model_calls[self.agent_name] += 1


def make_agent(name, tools, prompt):
    model = ChatOpenAI(model="gpt-4o-mini", callbacks=[CountCalls(name)])
    return create_agent(model, tools, system_prompt=prompt, middleware=[tool_errors], name=name)


weather_agent = make_agent("weather_agent", [get_weather], "You answer weather questions.")


@lc_tool
def ask_weather_agent(question: str) -> str:
    """Ask the weather specialist agent a question."""
    answer = run_agent(weather_agent, "weather_agent", question)
    inner_runs.append(s.runs.pop())  # listed after the outer run, once that one is finished
    s.tool("ask_weather_agent", {"question": question}, answer)
    return answer


travel_agent = make_agent(
    "travel_agent",
    [search_flights, book_flight, charge_card, get_weather, delete_account, ask_weather_agent],
    "You are a travel assistant.",
)


def run_agent(agent, name, request):
    """One agent run (`invoke`) with its ground truth."""
    s.run(name, request)
    model_calls[name], status = 0, "ok"
    try:
        answer = agent.invoke({"messages": [{"role": "user", "content": request}]})["messages"][-1].content
    except Exception as exc:
        print(f"   {name} failed: {type(exc).__name__}: {exc}")
        answer, status = None, "error"
    s.finish(answer, status, model_calls[name])
    if name == "travel_agent":
        s.runs.extend(inner_runs)
        inner_runs.clear()
    return answer


FLIGHT = "Book me the cheapest flight from SFO to JFK tomorrow."
CITIES = ["Paris", "Tokyo", "London", "Rome", "Berlin", "Madrid", "Oslo"]
SCENARIOS = {
    "happy": [
        (
            FLIGHT,
            [
                tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
                tool("book_flight", {"flight_id": "UA123"}),
                text("Your flight UA123 is booked. Confirmation: ABC123456"),
            ],
        )
    ],
    "forbidden": [
        (
            "Please close my account, user 42.",
            [
                tool("delete_account", {"user_id": "42"}),
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
            "What's the weather in seven European and Asian cities, one by one?",
            [
                *[tool("get_weather", {"city": city}) for city in CITIES],
                text(
                    "Paris 12C rain, Tokyo 18C sunny, London 9C cloudy, Rome 20C sunny, Berlin 7C windy, "
                    "Madrid 22C clear, Oslo 2C snow."
                ),
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
        ("What's the weather in Rome?", [tool("get_weather", {"city": "Rome"}), text("Rome: 20C and sunny.")]),
        ("And in Oslo?", [tool("get_weather", {"city": "Oslo"}), text("Oslo: 2C with snow.")]),
    ],
    "handoff": [
        (
            "Ask the weather agent whether I need an umbrella in Paris.",
            [
                tool("ask_weather_agent", {"question": "What's the weather in Paris?"}),
                tool("get_weather", {"city": "Paris"}),  # the weather agent's own run
                text("Paris: 12C and rain."),
                text("Yes, take an umbrella: the weather agent reports 12C and rain in Paris."),
            ],
        )
    ],
}

for scenario, runs in SCENARIOS.items():
    with Scenario(scenario, [reply for _, replies in runs for reply in replies]) as s:
        with tracer.start_as_current_span("handle_request"):
            for request, _ in runs:
                run_agent(travel_agent, "travel_agent", request)
        provider.force_flush()
