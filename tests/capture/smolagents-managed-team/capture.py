"""A smolagents manager with two managed agents, traced by openinference-instrumentation-smolagents.

`coordinator` (a `ToolCallingAgent` on `OpenAIServerModel`, Chat Completions, not streamed) owns the
`reserve_room` tool and manages `researcher` (find_hotels) and `account_desk` (refund_payment, which
fails, and delete_account), each a `ToolCallingAgent` that smolagents exposes to the manager as a tool
named after the agent. Every agent answers through smolagents' own `final_answer` tool (its argument is
the answer, not a tool call). Each request is wrapped in a `handle_request` span.

The ground truth is the request run of the coordinator: the user's request, its answer, every agent's
model calls (one per action step in each agent's memory, planning off) and tool calls in the order they
started: a managed agent's call (what the manager asked and got back, recorded around the managed
agent's `__call__`) followed by that agent's own calls, which the tools record. Each managed agent's own
run is described in the note. In `researcher_failure` the model backend fails during the managed agent's run
(and stays down for the coordinator's next call): the request fails.
"""

import os

from client import Scenario, failure
from client import tool as reply
from managed_agents import Ledger, Managed, run_manager
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
SmolagentsInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk")

model = OpenAIServerModel(
    model_id="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
)
s: Scenario  # the scenario being captured; every call goes into its request run
ledger = Ledger()  # what the managed agents did in the request being captured


def record(name: str, arguments: dict, result: str | None = None, error: bool = False) -> None:
    s.tool(name, arguments, result, error)


@tool
def find_hotels(city: str) -> str:
    """Find hotels in a city.

    Args:
        city: the city name
    """
    result = f"H-77 Hotel Lumiere, {city}, 140 EUR a night"
    record("find_hotels", {"city": city}, result)
    return result


@tool
def reserve_room(hotel_id: str, nights: int) -> str:
    """Reserve a room in a hotel.

    Args:
        hotel_id: the hotel to reserve in
        nights: how many nights
    """
    result = f"reserved {hotel_id}, code RZ-9081"
    record("reserve_room", {"hotel_id": hotel_id, "nights": nights}, result)
    return result


@tool
def refund_payment(order_id: str) -> str:
    """Refund a payment.

    Args:
        order_id: the order to refund
    """
    record("refund_payment", {"order_id": order_id}, error=True)
    raise RuntimeError("refund window closed")


@tool
def delete_account(user_id: str) -> str:
    """Delete the customer's account.

    Args:
        user_id: the account to delete
    """
    result = f"account {user_id} deleted"
    record("delete_account", {"user_id": user_id}, result)
    return result


def team() -> ToolCallingAgent:
    researcher = Managed(
        tools=[find_hotels],
        model=model,
        name="researcher",
        description="Finds hotels in a city.",
        verbosity_level=0,
        ledger=ledger,
    )
    account_desk = Managed(
        tools=[refund_payment, delete_account],
        model=model,
        name="account_desk",
        description="Handles refunds and account closures.",
        verbosity_level=0,
        ledger=ledger,
    )
    return ToolCallingAgent(
        tools=[reserve_room],
        model=model,
        managed_agents=[researcher, account_desk],
        name="coordinator",
        verbosity_level=0,
    )


def run(request: str) -> None:
    run_manager(team(), s, ledger, request)


def final(answer: str) -> dict:
    return reply("final_answer", {"answer": answer})


STAY = "Find me a hotel in Lisbon for 3 nights and reserve it."
SCENARIOS = {
    "research_and_reserve": (
        STAY,
        [
            reply("researcher", {"task": "Find hotels in Lisbon."}),
            reply("find_hotels", {"city": "Lisbon"}),
            final("H-77 Hotel Lumiere, 140 EUR a night."),
            reply("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            final("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            reply("account_desk", {"task": "Close the account of user 42."}),
            reply("delete_account", {"user_id": "42"}),
            final("Account 42 deleted."),
            final("Your account 42 has been closed."),
        ],
    ),
    "refund_error": (
        "I want a refund for order O-5521.",
        [
            reply("account_desk", {"task": "Refund order O-5521."}),
            reply("refund_payment", {"order_id": "O-5521"}),
            final("The refund failed: the refund window is closed."),
            final("Sorry, the refund window for order O-5521 has closed."),
        ],
    ),
    "researcher_failure": (
        STAY,
        [
            reply("researcher", {"task": "Find hotels in Lisbon."}),
            reply("find_hotels", {"city": "Lisbon"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for name, (request, replies) in SCENARIOS.items():
    with Scenario(name, replies, nested_runs_allowed=True) as s:
        with tracer.start_as_current_span("handle_request"):
            run(request)
        provider.force_flush()
