"""A LangGraph supervisor (`langgraph_supervisor.create_supervisor`) over three `create_react_agent` workers,
traced by openinference-instrumentation-langchain.

flights_agent (search_flights, book_flight), weather_agent (get_weather) and account_agent (delete_account)
run on `ChatOpenAI` (Chat Completions against OPENAI_BASE_URL); the supervisor hands work to them with
its `transfer_to_<agent>` tools, and each worker hands control back (the library adds the
`transfer_back_to_supervisor` messages itself, without a model call). Each request is wrapped in a
`handle_request` span.

The ground truth is the request run of the supervisor graph: the user's request, the supervisor's last
answer, every agent's model calls (counted by a callback on each agent's model) and tool calls (recorded
by the tools), and the handoffs, read from the graph's final messages (the handoff tool messages the
library marks with their destination, and its handoff-back messages). Each agent's own run is
described in the note.
"""

from collections import Counter

from client import Scenario, text, tool
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import tool as lc_tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from langgraph_handoffs import graph_handoffs
from langgraph_supervisor import create_supervisor
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import run_tool

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
LangChainInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()  # model calls per agent in the current request
SUPERVISOR = "supervisor"


@lc_tool
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return run_tool(s, "search_flights", {"origin": origin, "destination": destination})


@lc_tool
def book_flight(flight_id: str) -> str:
    """Book a flight by id."""
    return run_tool(s, "book_flight", {"flight_id": flight_id})


@lc_tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return run_tool(s, "get_weather", {"city": city})


@lc_tool
def delete_account(user_id: str) -> str:
    """Delete the user's account."""
    return run_tool(s, "delete_account", {"user_id": user_id})


class CountCalls(BaseCallbackHandler):
    """Counts one agent's chat model calls."""

    def __init__(self, agent_name):
        self.agent_name = agent_name

    def on_chat_model_start(self, *args, **kwargs):
        model_calls[self.agent_name] += 1


def chat_model(agent_name):
    return ChatOpenAI(model="gpt-4o-mini", callbacks=[CountCalls(agent_name)])


WORKERS = {
    "flights_agent": ([search_flights, book_flight], "You search and book flights."),
    "weather_agent": ([get_weather], "You answer weather questions."),
    "account_agent": ([delete_account], "You manage customer accounts."),
}
workers = [
    create_react_agent(chat_model(name), tools, prompt=prompt, name=name) for name, (tools, prompt) in WORKERS.items()
]
supervisor = create_supervisor(
    workers,
    model=chat_model(SUPERVISOR),
    prompt="You route travel requests to flights_agent, weather_agent or account_agent, then answer the user.",
    supervisor_name=SUPERVISOR,
).compile(name=SUPERVISOR)


def run_request(request: str) -> None:
    request_run = s.run(SUPERVISOR, request)
    model_calls.clear()
    messages = supervisor.invoke({"messages": [{"role": "user", "content": request}]})["messages"]
    s.finish(messages[-1].content, "ok", sum(model_calls.values()))
    own_tools = {name: [t.name for t in tools] for name, (tools, _) in WORKERS.items()}
    runs = [
        f"{name}: {calls} model call(s), tools "
        f"{[c['name'] for c in request_run['tool_calls'] if c['name'] in own_tools.get(name, ())]}"
        for name, calls in model_calls.items()
    ]
    request_run.update(
        handoffs=graph_handoffs(messages, lambda tool: SUPERVISOR, lambda agent: SUPERVISOR),
        nested_runs_allowed=True,
        note="The request run is the supervisor graph with every agent's model and tool calls; the handoffs "
        "include each worker's automatic transfer back. Each agent's own run is also reported, nested: "
        + "; ".join(runs)
        + ".",
    )


SCENARIOS = {
    "happy": (
        "Book me the cheapest flight from SFO to JFK tomorrow.",
        [
            tool("transfer_to_flights_agent", {}),
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Booked UA123, confirmation ABC123456."),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "forbidden": (
        "Please close my account, user 42.",
        [
            tool("transfer_to_account_agent", {}),
            tool("delete_account", {"user_id": "42"}),
            text("Account 42 deleted."),
            text("Your account has been deleted."),
        ],
    ),
    "two_workers": (
        "Book flight UA123 and tell me the weather in Paris.",
        [
            tool("transfer_to_flights_agent", {}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Booked UA123, confirmation ABC123456."),
            tool("transfer_to_weather_agent", {}),
            tool("get_weather", {"city": "Paris"}),
            text("Paris: 12C and rain."),
            text("UA123 is booked (confirmation ABC123456); Paris has 12C and rain."),
        ],
    ),
}

for scenario, (request, replies) in SCENARIOS.items():
    with Scenario(scenario, replies) as s:
        with tracer.start_as_current_span("handle_request"):
            run_request(request)
        provider.force_flush()
