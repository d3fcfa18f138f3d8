"""An AutoGen AgentChat `SelectorGroupChat` of three agents, with autogen-core's native tracing and its event
logger exported as OTLP log records.

front_desk (no tools), bookings (find_hotels, reserve_room) and billing (refund_payment, which fails, and
delete_account) are `AssistantAgent`s on `OpenAIChatCompletionClient`; before each turn the group chat
asks the model which agent speaks next (the selector's own model call, answered with the agent's name).
front_desk speaks first, then the desk the selector picks, and the chat ends after that desk's answer
(`MaxMessageTermination(3)`: the task and two agents' messages). autogen-core traces to the global
TracerProvider without content; its structured events (`autogen_core.events`: LLMCallEvent,
ToolCallEvent) go through an OTel LoggingHandler as OTLP log records. Each request is wrapped in a
`handle_request` span. Run as ../autogen-selector-default/capture.py (DEFAULT_SETTINGS=True), only the
spans are exported, and every run's ground truth lists in `lacks` what spans alone cannot carry.

The ground truth is the request run of the team: the user's request, the last agent's answer, every model
call made for it (the selector's and the agents', counted at the HTTP client, a retry not counted again),
the tool calls (recorded by the tools), and the handoffs: each change of speaker, from the agents whose model
clients were called, in order (checked against the team's own message sources where the team returns). In
`bookings_failure` the model backend fails during bookings' turn and the team raises.
"""

import asyncio
import logging
import os
import warnings
from itertools import pairwise

import httpx2
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import SelectorGroupChat
from autogen_core import EVENT_LOGGER_NAME
from autogen_ext.models.openai import OpenAIChatCompletionClient
from client import Scenario, failure, text, tool
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

resource = Resource.create({"service.name": "hotel-desk"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)  # autogen-core traces to the global provider
DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # spans only: the event logger is not exported
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results", "llm_calls"]  # what spans alone lack
logs = LoggerProvider(resource=resource)
if not DEFAULT_SETTINGS:
    logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    set_logger_provider(logs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        events = logging.getLogger(EVENT_LOGGER_NAME)
        events.addHandler(LoggingHandler(logger_provider=logs))
        events.setLevel(logging.INFO)
tracer = trace.get_tracer("hotel-desk")
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

s: Scenario  # the scenario being captured; the tools record into its request run
calls = {"model": 0}  # model calls of the request in progress
acted: list[str] = []  # the agent behind each of them ("selector" for the group chat's own)


def model(owner: str) -> OpenAIChatCompletionClient:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
            calls["model"] += 1
            acted.append(owner)

    return OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": True,
            "family": "gpt-4o",
            "structured_output": True,
        },
        http_client=httpx2.AsyncClient(event_hooks={"request": [count]}),
    )


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


def agent(name: str, description: str, tools: list) -> AssistantAgent:
    return AssistantAgent(
        name,
        model_client=model(name),
        tools=tools,
        description=description,
        system_message=f"You are the hotel's {name.replace('_', ' ')}. {description}",
        reflect_on_tool_use=True,
        max_tool_iterations=10,  # keep calling tools until it answers
    )


def team() -> SelectorGroupChat:
    return SelectorGroupChat(
        [
            agent("front_desk", "Greets guests and says which desk will help.", []),
            agent("bookings", "Finds and reserves hotels.", [find_hotels, reserve_room]),
            agent("billing", "Handles refunds and account closures.", [refund_payment, delete_account]),
        ],
        model_client=model("selector"),
        termination_condition=MaxMessageTermination(3),  # the task, front_desk's message, the desk's answer
    )


async def run(request: str) -> None:
    truth = s.run("front_desk", request)
    calls["model"] = 0
    acted.clear()
    lacks = LACKS if DEFAULT_SETTINGS else []
    try:
        result = await team().run(task=request)
        speakers = [m.source for m in result.messages if m.source != "user"]
        output, status = result.messages[-1].to_text(), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        speakers, output, status = None, None, "error"
        # AutoGen records a model call only when it succeeds: the call that failed is not in the trace.
        lacks = sorted({*lacks, "llm_calls"})
    turns = [name for name in acted if name != "selector"]
    # the agents in the order they spoke, the same as the team's message sources when the team returns them
    handoffs = [{"from": a, "to": b} for a, b in pairwise(turns) if a != b]
    assert speakers is None or handoffs == [{"from": a, "to": b} for a, b in pairwise(speakers) if a != b]
    s.finish(output, status, calls["model"], lacks=lacks or None)
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note="The request run is the selector group chat's, with every model call made for it: the selector's "
        f"(one before each turn) and each agent's; the model calls, by whom: {acted}.",
    )


def turn(desk: str, replies: list) -> list:
    """The selector picks front_desk, which says where the guest goes, then the selector picks the desk."""
    return [text("front_desk"), text(f"The {desk} desk will help you with that."), text(desk), *replies]


SCENARIOS = {
    "booking_group": (
        "Find me a hotel in Lisbon for 3 nights and reserve it.",
        turn(
            "bookings",
            [
                tool("find_hotels", {"city": "Lisbon"}),
                tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
                text("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
            ],
        ),
    ),
    "refund_error": (
        "I want a refund for order O-5521.",
        turn(
            "billing",
            [
                tool("refund_payment", {"order_id": "O-5521"}),
                text("Sorry, the refund window for order O-5521 has closed."),
            ],
        ),
    ),
    "close_account": (
        "Please close my account, user 42.",
        turn("billing", [tool("delete_account", {"user_id": "42"}), text("Your account 42 has been closed.")]),
    ),
    "bookings_failure": (
        "Reserve H-77 for 3 nights.",
        turn(
            "bookings",
            [tool("reserve_room", {"hotel_id": "H-77", "nights": 3}), failure(500, "model backend unavailable")],
        ),
    ),
}


async def main() -> None:
    global s
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(request)
            provider.force_flush()
            logs.force_flush()


asyncio.run(main())
