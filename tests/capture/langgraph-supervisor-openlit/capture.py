"""A LangGraph supervisor (`langgraph-supervisor`'s create_supervisor over three create_react_agent workers) traced
by OpenLIT (`openlit.init`), or, when run from a sibling folder, by OpenLIT with message content off
(INSTRUMENTATION="openlit-redacted") or by OpenLLMetry's `Traceloop.init` (INSTRUMENTATION="traceloop").

The supervisor hands the request to a worker with its `transfer_to_<worker>` tool; the worker runs its
own ReAct loop and hands back (`transfer_back_to_supervisor`, written by langgraph-supervisor, no model
call), and the supervisor answers the user. Workers run their tools in a `ToolNode` that turns a raising
tool into an error ToolMessage (handle_tool_errors=True), so the worker can recover. Every model is a
`ChatOpenAI` on Chat Completions against OPENAI_BASE_URL. Each request is wrapped in a `handle_request`
span, as a web service would. The ground truth is the request run: the supervisor's, with every agent's
model calls and the workers' real tool calls; the handoffs are what the graph state shows.
"""

import functools
import os

from client import Scenario, failure, text, tool
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph_supervisor import create_supervisor
from opentelemetry import trace
from tool_loop import FUNCTIONS

INSTRUMENTATION = globals().get("INSTRUMENTATION", "openlit")
SERVICE = "travel-service"
if INSTRUMENTATION == "traceloop":
    from traceloop.sdk import Traceloop

    os.environ["TRACELOOP_METRICS_ENABLED"] = "false"  # the harness records traces and logs only
    Traceloop.init(
        app_name=SERVICE,
        api_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
        disable_batch=True,
        telemetry_enabled=False,
    )
else:
    import openlit

    openlit.init(
        otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
        application_name=SERVICE,
        service_name=SERVICE,
        disable_batch=True,
        disable_metrics=True,  # the harness records traces and logs only
        disabled_instrumentors=["urllib"],  # the harness's own control calls, not the service's
        capture_message_content=INSTRUMENTATION != "openlit-redacted",
    )
tracer = trace.get_tracer(SERVICE)


def flush():
    trace.get_tracer_provider().force_flush()
    from opentelemetry._logs import get_logger_provider

    logs = get_logger_provider()
    if hasattr(logs, "force_flush"):
        logs.force_flush()


s: Scenario  # the scenario being captured; the tools record what they really receive and return


def recorded_tool(name, description):
    """The shared travel tool `name` (tool_loop.FUNCTIONS) as a LangChain tool that records each real run."""
    function = FUNCTIONS[name]

    @functools.wraps(function)
    def run(**arguments):
        try:
            result = function(**arguments)
        except Exception:
            s.tool(name, arguments, error=True)
            raise
        s.tool(name, arguments, result)
        return result

    return StructuredTool.from_function(run, name=name, description=description)


search_flights = recorded_tool("search_flights", "Search flights between two airports.")
book_flight = recorded_tool("book_flight", "Book a flight by id.")
get_weather = recorded_tool("get_weather", "Current weather in a city.")
delete_account = recorded_tool("delete_account", "Delete the user's account.")
charge_card = recorded_tool("charge_card", "Charge the customer's card.")


model_calls = {"count": 0}  # ground truth: every agent's chat model calls in the current request
handed_to: list[str] = []  # ground truth when a request fails: the handoff tools that really ran


class CountCalls(BaseCallbackHandler):
    """Counts chat model calls (the OpenAI client's own HTTP retries are inside one call)."""

    def on_chat_model_start(self, *args, **kwargs):
        model_calls["count"] += 1


class HandoffTools(BaseCallbackHandler):
    """Records each `transfer_to_*` handoff tool that ran to its end."""

    def __init__(self):
        self.names = {}

    def on_tool_start(self, serialized, input_str, *, run_id, **kwargs):
        self.names[run_id] = (serialized or {}).get("name") or kwargs.get("name")

    def on_tool_end(self, output, *, run_id, **kwargs):
        name = self.names.pop(run_id, None)
        if name and name.startswith("transfer_to_"):
            handed_to.append(name.removeprefix("transfer_to_"))


def model():
    return ChatOpenAI(model="gpt-4o-mini", callbacks=[CountCalls()])


def worker(name, tools, prompt):
    return create_react_agent(model(), ToolNode(tools, handle_tool_errors=True), prompt=prompt, name=name)


def build_supervisor():
    return create_supervisor(
        [
            worker("flights_agent", [search_flights, book_flight], "You search and book flights."),
            worker("weather_agent", [get_weather], "You answer weather questions."),
            worker("account_agent", [delete_account, charge_card], "You manage the customer's account and payments."),
        ],
        model=model(),
        prompt="You are a travel assistant's supervisor: hand each request to the right worker, then answer the user.",
    ).compile(name="supervisor")


def handoffs_in(messages):
    """The control transfers the final graph state records, in order: a `transfer_to_<agent>` tool message
    moves control from the agent that holds it, a `transfer_back_to_<agent>` one returns it."""
    holder, out = "supervisor", []
    for message in messages:
        if not isinstance(message, ToolMessage) or not message.name:
            continue
        for prefix in ("transfer_to_", "transfer_back_to_"):
            if message.name.startswith(prefix):
                target = message.name.removeprefix(prefix)
                out.append({"from": holder, "to": target})
                holder = target
    return out


def handle_request(request):
    """One user request to the supervisor graph, with its ground truth."""
    run = s.run("supervisor", request)
    model_calls["count"] = 0
    handed_to.clear()
    try:
        state = supervisor.invoke(
            {"messages": [{"role": "user", "content": request}]}, config={"callbacks": [HandoffTools()]}
        )
        answer, status, handoffs = state["messages"][-1].content, "ok", handoffs_in(state["messages"])
    except Exception as exc:
        print(f"   supervisor failed: {type(exc).__name__}: {exc}")
        answer, status = None, "error"
        handoffs = [{"from": "supervisor", "to": agent} for agent in handed_to]  # no worker handed back
    s.finish(answer, status, model_calls["count"], lacks=LACKS)
    run["handoffs"] = handoffs


# With content capture off OpenLIT records no model call's messages and no tool result; it still writes the
# request on LangGraph node spans, the answer on the graph's span and the requested tool calls on model calls.
LACKS = ["messages", "tool_results"] if INSTRUMENTATION == "openlit-redacted" else None


def transfer(agent):
    return tool(f"transfer_to_{agent}", {})


FLIGHT = "Book me the cheapest flight from SFO to JFK tomorrow."
SCENARIOS = {
    "happy": (
        FLIGHT,
        [
            transfer("flights_agent"),
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Booked UA123, confirmation ABC123456."),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
        "flights_agent's own run: the user's request as handed over, search_flights then book_flight, 3 model "
        "calls, answer 'Booked UA123, confirmation ABC123456.'; the supervisor's own model calls are 2.",
    ),
    "forbidden": (
        "Please close my account, user 42.",
        [
            transfer("account_agent"),
            tool("delete_account", {"user_id": "42"}),
            text("The account of user 42 is deleted."),
            text("Your account has been deleted."),
        ],
        "account_agent's own run: delete_account, 2 model calls, answer 'The account of user 42 is deleted.'.",
    ),
    "two_workers": (
        "Find me a flight from SFO to Paris and tell me the weather there.",
        [
            transfer("flights_agent"),
            tool("search_flights", {"origin": "SFO", "destination": "CDG"}),
            text("UA123 at 09:00 for $320."),
            transfer("weather_agent"),
            tool("get_weather", {"city": "Paris"}),
            text("Paris: 12C and rain."),
            text("UA123 leaves SFO at 09:00 for $320; Paris is 12C with rain."),
        ],
        "Two worker runs: flights_agent (search_flights, 2 model calls, answer 'UA123 at 09:00 for $320.') and "
        "then weather_agent (get_weather, 2 model calls, answer 'Paris: 12C and rain.'); the supervisor's own "
        "model calls are 3.",
    ),
    "tool_error": (
        "Charge my card 120 dollars for the upgrade.",
        [
            transfer("account_agent"),
            tool("charge_card", {"amount": 120}),
            text("The card was declined."),
            text("Sorry, your card was declined."),
        ],
        "account_agent's own run: charge_card fails (card declined) and the worker recovers, 2 model calls, "
        "answer 'The card was declined.'.",
    ),
    "agent_error": (
        "Book me a flight to Mars.",
        [
            transfer("flights_agent"),
            tool("search_flights", {"origin": "SFO", "destination": "MARS"}),
            failure(500, "model backend unavailable"),
        ],
        "flights_agent's own run: search_flights, then its second model call fails (HTTP 500, after the OpenAI "
        "client's retries) and the whole request fails; no answer.",
    ),
}


# The service builds its graph once, at start-up; OpenLIT traces the construction (add_node, compile) in
# traces of their own, which hold no run.
if INSTRUMENTATION == "traceloop":
    supervisor = build_supervisor()
else:
    with Scenario("startup", [], note="graph construction at service start-up: no model call, no run") as s:
        supervisor = build_supervisor()
        flush()

for scenario, (request, replies, note) in SCENARIOS.items():
    with Scenario(scenario, replies, nested_runs_allowed=True, note=note) as s:
        with tracer.start_as_current_span("handle_request"):
            handle_request(request)
        flush()
