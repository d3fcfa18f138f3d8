"""Microsoft Agent Framework's handoff orchestration (`HandoffBuilder`) of three agents, with the framework's
own GenAI and workflow spans.

front_desk may hand over to bookings or billing, and bookings to billing, through the tools the
orchestration adds to each agent (`handoff_to_<agent>`, answered by the orchestration without running
anything); bookings has find_hotels and reserve_room, billing refund_payment (fails) and delete_account.
The workflow stops once an agent answers with text. Agent Framework instruments itself (on by default)
through the global OpenTelemetry providers, set here to SDK providers exporting OTLP/HTTP protobuf
(traces, and log records); message content is turned on the documented way, ENABLE_SENSITIVE_DATA=true.
Each request is wrapped in a `handle_request` span. Run as ../agent-framework-handoff-default/capture.py
(DEFAULT_SETTINGS=True), sensitive data stays off, and every run's ground truth lists in `lacks` what that
trace cannot carry.

The ground truth is the request run of the workflow: the user's request, the last agent's answer, every
agent's model calls (counted by a chat middleware on each agent) and tool calls (recorded by the tools),
and the handoffs: the agents in the order their models were first called (control moves only by handoff,
checked against the workflow's own `handoff_sent` events where the workflow returns; in `bookings_failure` the
model backend fails during bookings' turn and the workflow raises).
"""

import asyncio
import os
from itertools import pairwise

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
if not DEFAULT_SETTINGS:
    os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from agent_framework import Agent, chat_middleware  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from agent_framework_orchestrations import HandoffBuilder  # noqa: E402
from client import Scenario, failure, text, tool  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

resource = Resource.create({"service.name": "hotel-desk"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
log_provider = LoggerProvider(resource=resource)
log_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter()))
_logs.set_logger_provider(log_provider)
tracer = trace.get_tracer("hotel-desk")

s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls each agent made, counted by its chat middleware
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry


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


def counter(agent_name: str):
    @chat_middleware
    async def count(context, call_next):
        CALLS[agent_name] = CALLS.get(agent_name, 0) + 1  # dicts keep the order agents first acted in
        await call_next()

    return count


def make_agent(name: str, instructions: str, tools: list) -> Agent:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])
    return Agent(
        client,
        instructions,
        name=name,
        description=instructions,
        tools=tools,
        middleware=[counter(name)],
        require_per_service_call_history_persistence=True,  # what the handoff orchestration asks of each agent
    )


def answered(conversation) -> bool:
    """The workflow ends once an agent's last message is an answer in text."""
    return bool(conversation) and conversation[-1].role == "assistant" and bool(conversation[-1].text)


def workflow():
    front_desk = make_agent("front_desk", "You route guest requests.", [])
    bookings = make_agent("bookings", "You find and reserve hotels.", [find_hotels, reserve_room])
    billing = make_agent("billing", "You handle refunds and accounts.", [refund_payment, delete_account])
    return (
        HandoffBuilder(name="hotel_desk", participants=[front_desk, bookings, billing], termination_condition=answered)
        .with_start_agent(front_desk)
        .add_handoff(front_desk, [bookings, billing])
        .add_handoff(bookings, [billing])
        .build()
    )


async def run(request: str) -> None:
    truth = s.run("front_desk", request)
    CALLS.clear()
    try:
        events = await workflow().run(request)
        outputs = events.get_outputs()
        output, status = outputs[-1].text if outputs else None, "ok"
        sent = [{"from": e.data.source, "to": e.data.target} for e in events if e.type == "handoff_sent"]
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status, sent = None, "error", None
    # control moves only by handoff (each agent here acts once): the agents in the order their models were
    # first called, the same as the workflow's handoff_sent events when the workflow returns them
    handoffs = [{"from": a, "to": b} for a, b in pairwise(CALLS)]
    assert sent is None or sent == handoffs, (sent, handoffs)
    s.finish(output, status, sum(CALLS.values()), lacks=LACKS if DEFAULT_SETTINGS else None)
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note="The request run is the handoff workflow's, with every agent's model and tool calls; model calls per "
        "agent: " + ", ".join(f"{name} {n}" for name, n in CALLS.items()) + ".",
    )


SCENARIOS = {
    "booking_handoff": (
        "Find me a hotel in Lisbon for 3 nights and reserve it.",
        [
            tool("handoff_to_bookings", {}),
            tool("find_hotels", {"city": "Lisbon"}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
        ],
    ),
    "reserve_then_refund": (
        "Reserve H-77 for 3 nights, then refund my old order O-5521.",
        [
            tool("handoff_to_bookings", {}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            tool("handoff_to_billing", {}),
            tool("refund_payment", {"order_id": "O-5521"}),
            text("H-77 is reserved (code RZ-9081), but the refund window for order O-5521 has closed."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            tool("handoff_to_billing", {}),
            tool("delete_account", {"user_id": "42"}),
            text("Your account 42 has been closed."),
        ],
    ),
    "bookings_failure": (
        "Reserve H-77 for 3 nights.",
        [
            tool("handoff_to_bookings", {}),
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
            log_provider.force_flush()


asyncio.run(main())
