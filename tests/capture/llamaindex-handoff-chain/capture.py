"""A LlamaIndex `AgentWorkflow` of three `FunctionAgent`s handing off to each other, traced by
openinference-instrumentation-llama-index.

`front_desk` may hand over to `bookings` or `billing` and `bookings` to `billing` (`can_handoff_to`),
through the workflow's own `handoff` tool, whose argument `to_agent` names the next agent. The agents
talk Chat Completions to the scripted model through `OpenAILike` (streamed, the default); the tools are
hotel, refund (fails) and account tools. Each request is wrapped in a `handle_request` span.

The ground truth is the request run of the workflow: the user's request, the last agent's answer, every
agent's model calls (one `AgentInput` event each) and tool calls (recorded by the tools), and the
handoffs, taken from the workflow's own events: a `handoff` `ToolCallResult` moves control from the
agent of the last `AgentInput` to its `to_agent`. In `bookings_failure` the model backend fails during
bookings' turn and the workflow fails.
"""

import asyncio

from client import Scenario, failure, text, tool
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool
from llamaindex_workflow import scripted_llm, serve_request
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
LlamaIndexInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk")

llm = scripted_llm()
s: Scenario  # the scenario whose request run the tools record into


def find_hotels(city: str) -> str:
    """Find hotels in a city."""
    result = f"H-77 Hotel Lumiere, {city}, 140 EUR a night"
    s.tool("find_hotels", {"city": city}, result)
    return result


def reserve_room(hotel_id: str, nights: int) -> str:
    """Reserve a room in a hotel."""
    result = f"reserved {hotel_id}, code RZ-9081"
    s.tool("reserve_room", {"hotel_id": hotel_id, "nights": nights}, result)
    return result


def refund_payment(order_id: str) -> str:
    """Refund a payment."""
    s.tool("refund_payment", {"order_id": order_id}, error=True)
    raise RuntimeError("refund window closed")


def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    result = f"account {user_id} deleted"
    s.tool("delete_account", {"user_id": user_id}, result)
    return result


def workflow() -> AgentWorkflow:
    front_desk = FunctionAgent(
        name="front_desk",
        description="Greets guests and routes their requests.",
        llm=llm,
        tools=[],
        can_handoff_to=["bookings", "billing"],
        system_prompt="You route guest requests to bookings or billing.",
    )
    bookings = FunctionAgent(
        name="bookings",
        description="Finds and reserves hotels.",
        llm=llm,
        tools=[FunctionTool.from_defaults(find_hotels), FunctionTool.from_defaults(reserve_room)],
        can_handoff_to=["billing"],
        system_prompt="You find and reserve hotels; payment questions go to billing.",
    )
    billing = FunctionAgent(
        name="billing",
        description="Handles refunds and account closures.",
        llm=llm,
        tools=[FunctionTool.from_defaults(refund_payment), FunctionTool.from_defaults(delete_account)],
        can_handoff_to=[],
        system_prompt="You handle refunds and accounts.",
    )
    return AgentWorkflow(agents=[front_desk, bookings, billing], root_agent="front_desk")


async def run(request: str) -> None:
    await serve_request(s, workflow(), request, "front_desk")


def hand(to: str, reason: str) -> dict:
    return tool("handoff", {"to_agent": to, "reason": reason})


SCENARIOS = {
    "booking_handoff": (
        "Find me a hotel in Lisbon for 3 nights and reserve it.",
        [
            hand("bookings", "The guest wants a hotel reserved."),
            tool("find_hotels", {"city": "Lisbon"}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
        ],
    ),
    "refund_two_handoffs": (
        "My Lisbon stay was cancelled; refund order O-5521.",
        [
            hand("bookings", "A cancelled stay."),
            hand("billing", "The guest wants a refund."),
            tool("refund_payment", {"order_id": "O-5521"}),
            text("Sorry, the refund window for order O-5521 has closed."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            hand("billing", "Account closure."),
            tool("delete_account", {"user_id": "42"}),
            text("Your account 42 has been closed."),
        ],
    ),
    "bookings_failure": (
        "Reserve H-77 for 3 nights.",
        [
            hand("bookings", "The guest wants H-77 for 3 nights."),
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
                await run(request)
            provider.force_flush()


asyncio.run(main())
