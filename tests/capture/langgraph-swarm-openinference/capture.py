"""A LangGraph swarm (`langgraph_swarm.create_swarm`) of three `create_react_agent` agents whose handoff tools
have names of their own, traced by openinference-instrumentation-langchain.

front_desk hands over with `route_to_bookings` and `escalate_to_billing`, bookings (find_hotels,
reserve_room) with `escalate_to_billing`, billing (refund_payment, which fails, and delete_account) with
`back_to_front_desk`: each made by `create_handoff_tool(agent_name=..., name=...)`. Control stays with the
agent that received it; the library's handoff tool answers without a model call. The agents run on
`ChatOpenAI` (Chat Completions against OPENAI_BASE_URL); their tool nodes turn a tool's exception into an
error message for the model (`handle_tool_errors=True`). Each request is wrapped in a `handle_request`
span. Run as ../langgraph-swarm-openlit/capture.py (INSTRUMENTATION="openlit"), the same swarm is traced by
OpenLIT (`openlit.init`, content on by default) instead; run as ../langgraph-swarm-openinference-redacted/
capture.py, OpenInference's hide switches are on and every run lists in `lacks` what the trace cannot carry.

The ground truth is the request run of the swarm graph (`hotel_swarm`): the user's request, the last
answer, every agent's model calls (counted by a callback on each agent's model) and tool calls
(recorded by the tools), and the handoffs: the agents in the order their models were first called (control
moves only by handoff), checked against the graph's final messages where it returns them (each handoff
tool's message, from the agent whose model asked for it to the tool's destination). In `bookings_failure`
the model backend fails during bookings' turn and the graph raises.
"""

import os
from collections import Counter
from itertools import pairwise

from client import Scenario, failure, text, tool
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool as lc_tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph_swarm import create_handoff_tool, create_swarm
from opentelemetry import trace

INSTRUMENTATION = globals().get("INSTRUMENTATION", "openinference")
HIDDEN = globals().get("HIDDEN")  # what a run of a trace with content hidden cannot carry
if INSTRUMENTATION == "openlit":
    import openlit

    openlit.init(
        otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
        application_name="hotel-desk",
        service_name="hotel-desk",
        disable_batch=True,
        disable_metrics=True,  # the harness records traces and logs only
        disabled_instrumentors=["urllib"],  # the harness's own control calls, not the service's
    )
else:
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    LangChainInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk")


def flush() -> None:
    """Send every span (and log record) the instrumentation holds before the scenario closes."""
    trace.get_tracer_provider().force_flush()
    from opentelemetry._logs import get_logger_provider

    logs = get_logger_provider()
    if hasattr(logs, "force_flush"):
        logs.force_flush()


s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()  # model calls per agent in the current request
SWARM = "hotel_swarm"


@lc_tool
def find_hotels(city: str) -> str:
    """Find hotels in a city."""
    result = f"H-77 Hotel Lumiere, {city}, 140 EUR a night"
    s.tool("find_hotels", {"city": city}, result)
    return result


@lc_tool
def reserve_room(hotel_id: str, nights: int) -> str:
    """Reserve a room in a hotel."""
    result = f"reserved {hotel_id}, code RZ-9081"
    s.tool("reserve_room", {"hotel_id": hotel_id, "nights": nights}, result)
    return result


@lc_tool
def refund_payment(order_id: str) -> str:
    """Refund a payment."""
    s.tool("refund_payment", {"order_id": order_id}, error=True)
    raise RuntimeError("refund window closed")


@lc_tool
def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    result = f"account {user_id} deleted"
    s.tool("delete_account", {"user_id": user_id}, result)
    return result


class CountCalls(BaseCallbackHandler):
    """Counts one agent's chat model calls."""

    def __init__(self, agent_name):
        self.agent_name = agent_name

    def on_chat_model_start(self, *args, **kwargs):
        model_calls[self.agent_name] += 1


HANDOFFS = {  # handoff tool name -> destination agent
    "route_to_bookings": "bookings",
    "escalate_to_billing": "billing",
    "back_to_front_desk": "front_desk",
}


def handoff(name: str):
    return create_handoff_tool(agent_name=HANDOFFS[name], name=name, description=f"Hand over to {HANDOFFS[name]}.")


AGENTS = {
    "front_desk": ([handoff("route_to_bookings"), handoff("escalate_to_billing")], "You route guest requests."),
    "bookings": ([find_hotels, reserve_room, handoff("escalate_to_billing")], "You find and reserve hotels."),
    "billing": ([refund_payment, delete_account, handoff("back_to_front_desk")], "You handle refunds and accounts."),
}


def build_swarm():
    return create_swarm(
        [
            create_react_agent(
                ChatOpenAI(model="gpt-4o-mini", callbacks=[CountCalls(name)]),
                ToolNode(tools, handle_tool_errors=True),
                prompt=prompt,
                name=name,
            )
            for name, (tools, prompt) in AGENTS.items()
        ],
        default_active_agent="front_desk",
    ).compile(name=SWARM)


def handoffs(messages) -> list[dict[str, str]]:
    """The control transfers the swarm made, in order: each handoff tool's message, from the agent whose
    model asked for that call."""
    asked_by = {
        call["id"]: message.name
        for message in messages
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    }
    return [
        {"from": asked_by[message.tool_call_id], "to": HANDOFFS[message.name]}
        for message in messages
        if isinstance(message, ToolMessage) and message.name in HANDOFFS
    ]


def run_request(request: str) -> None:
    request_run = s.run(SWARM, request)
    model_calls.clear()
    try:
        messages = swarm.invoke({"messages": [{"role": "user", "content": request}]})["messages"]
        output, status, told = messages[-1].content, "ok", handoffs(messages)
    except Exception as exc:
        print(f"   swarm failed: {type(exc).__name__}: {exc}")
        output, status, told = None, "error", None
    # control moves only by handoff (each agent here acts once): the agents in the order their models were first
    # called, the same as the handoff messages when the graph returns them
    acted = [{"from": a, "to": b} for a, b in pairwise(model_calls)]
    assert told is None or told == acted, (told, acted)
    s.finish(output, status, sum(model_calls.values()), lacks=HIDDEN)
    request_run.update(
        handoffs=acted,
        nested_runs_allowed=True,
        note="The request run is the swarm graph with every agent's model and tool calls; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in model_calls.items())
        + ".",
    )


SCENARIOS = {
    "booking_handoff": (
        "Find me a hotel in Lisbon for 3 nights and reserve it.",
        [
            tool("route_to_bookings", {}),
            tool("find_hotels", {"city": "Lisbon"}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
        ],
    ),
    "reserve_then_refund": (
        "Reserve H-77 for 3 nights, then refund my old order O-5521.",
        [
            tool("route_to_bookings", {}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            tool("escalate_to_billing", {}),
            tool("refund_payment", {"order_id": "O-5521"}),
            text("H-77 is reserved (code RZ-9081), but the refund window for order O-5521 has closed."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            tool("escalate_to_billing", {}),
            tool("delete_account", {"user_id": "42"}),
            text("Your account 42 has been closed."),
        ],
    ),
    "bookings_failure": (
        "Reserve H-77 for 3 nights.",
        [
            tool("route_to_bookings", {}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

# The service builds its swarm once, at start-up; OpenLIT traces the construction (add_node, compile) in traces
# of their own, which hold no run.
if INSTRUMENTATION == "openlit":
    with Scenario("startup", [], note="graph construction at service start-up: no model call, no run") as s:
        swarm = build_swarm()
        flush()
else:
    swarm = build_swarm()

for scenario, (request, replies) in SCENARIOS.items():
    with Scenario(scenario, replies, nested_runs_allowed=True) as s:
        with tracer.start_as_current_span("handle_request"):
            run_request(request)
        flush()
