"""A Strands Agents `Swarm` of three agents with Strands' own telemetry (StrandsTelemetry + OTLP/HTTP exporter).

front_desk, bookings (find_hotels, reserve_room) and billing (refund_payment, which fails, and
delete_account) share the swarm's own `handoff_to_agent` tool, whose `agent_name` argument names the next
agent; the agent that handed off gets the tool's answer and ends its turn with one more model call, then
the swarm runs the named agent. The OpenAI model provider streams chat completions from the scripted
model at OPENAI_BASE_URL. Message content is on by default (span events). Each request is wrapped in a
`handle_request` span from a tracer of the same provider.

The ground truth is the request run of the swarm: the user's request, the last agent's answer, every
agent's model calls (counted by each agent's BeforeModelCallEvent hook) and tool calls (recorded by the
tools), and the handoffs, from the swarm's own handoff events. In `bookings_failure` the model backend fails
during bookings' turn: the swarm reports the request failed.
"""

import asyncio
import os
from collections import Counter

from client import Scenario, failure, text, tool
from opentelemetry import trace
from strands import Agent
from strands import tool as strands_tool
from strands.models.openai import OpenAIModel
from strands.multiagent import Swarm
from strands.telemetry import StrandsTelemetry
from strands_swarm import counted, serve_swarm

os.environ.setdefault("OTEL_SERVICE_NAME", "hotel-desk")  # read by StrandsTelemetry's resource
telemetry = StrandsTelemetry().setup_otlp_exporter()  # OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
tracer = trace.get_tracer("hotel-desk")
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()


@strands_tool
async def find_hotels(city: str) -> str:
    """Find hotels in a city."""
    result = f"H-77 Hotel Lumiere, {city}, 140 EUR a night"
    s.tool("find_hotels", {"city": city}, result)
    return result


@strands_tool
async def reserve_room(hotel_id: str, nights: int) -> str:
    """Reserve a room in a hotel."""
    result = f"reserved {hotel_id}, code RZ-9081"
    s.tool("reserve_room", {"hotel_id": hotel_id, "nights": nights}, result)
    return result


@strands_tool
async def refund_payment(order_id: str) -> str:
    """Refund a payment."""
    s.tool("refund_payment", {"order_id": order_id}, error=True)
    raise RuntimeError("refund window closed")


@strands_tool
async def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    result = f"account {user_id} deleted"
    s.tool("delete_account", {"user_id": user_id}, result)
    return result


def model() -> OpenAIModel:
    client_args = {"base_url": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]}
    return OpenAIModel(client_args=client_args, model_id="gpt-4o-mini")


def make_agent(name: str, description: str, agent_tools: list) -> Agent:
    agent = Agent(
        name=name,
        description=description,
        model=model(),
        system_prompt=f"You are the hotel's {name.replace('_', ' ')}.",
        tools=agent_tools,
        callback_handler=None,
    )
    return counted(agent, model_calls)


def swarm() -> Swarm:
    """A new swarm for each request: Strands agents keep their conversation across invocations."""
    front_desk = make_agent("front_desk", "Routes guest requests.", [])
    bookings = make_agent("bookings", "Finds and reserves hotels.", [find_hotels, reserve_room])
    billing = make_agent("billing", "Handles refunds and account closures.", [refund_payment, delete_account])
    return Swarm([front_desk, bookings, billing], entry_point=front_desk)


def hand(to: str, message: str) -> dict:
    return tool("handoff_to_agent", {"agent_name": to, "message": message})


SCENARIOS = {
    "booking_handoff": (
        "Find me a hotel in Lisbon for 3 nights and reserve it.",
        [
            hand("bookings", "The guest wants a hotel in Lisbon for 3 nights."),
            text("Handing you over to bookings."),
            tool("find_hotels", {"city": "Lisbon"}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
        ],
    ),
    "reserve_then_refund": (
        "Reserve H-77 for 3 nights, then refund my old order O-5521.",
        [
            hand("bookings", "Reserve H-77 for 3 nights; then a refund."),
            text("Handing you over to bookings."),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            hand("billing", "H-77 is reserved; the guest wants order O-5521 refunded."),
            text("H-77 is reserved; billing will handle the refund."),
            tool("refund_payment", {"order_id": "O-5521"}),
            text("H-77 is reserved (code RZ-9081), but the refund window for order O-5521 has closed."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            hand("billing", "The guest wants account 42 closed."),
            text("Handing you over to billing."),
            tool("delete_account", {"user_id": "42"}),
            text("Your account 42 has been closed."),
        ],
    ),
    "bookings_failure": (
        "Reserve H-77 for 3 nights.",
        [
            hand("bookings", "Reserve H-77 for 3 nights."),
            text("Handing you over to bookings."),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            failure(500, "model backend unavailable"),
        ],
    ),
}


async def main() -> None:
    global s
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await serve_swarm(s, swarm(), "front_desk", request, model_calls)
            telemetry.tracer_provider.force_flush()


asyncio.run(main())
