"""OpenAI Agents SDK multi-agent topologies traced by openinference-instrumentation-openai-agents.

Each scenario is one request (one `Runner.run`, wrapped in a `handle_request` span) served by several
agents: a handoff (triage_agent -> booking_agent), an agent called as a tool (orchestrator_agent calls
booking_agent through `booking_agent.as_tool(...)` and then answers), both (triage hands off to the
orchestrator, which calls the booking agent as a tool), and a forbidden tool call in the worker reached
by handoff. The ground truth is the request run: the entry agent's name, the user's request, the answer
the user got, every agent's model calls and non-transfer tool calls in the order they started, and the
handoffs; each agent's own run is described in the scenario's note.

Run as ../openai-agents-redacted/capture.py (REDACTED=True), the single-agent scenarios happy, forbidden
and tool_error are captured with OpenInference's hide switches on instead; those runs list in `lacks`
what the hidden trace cannot carry.

The ground truth comes from the SDK's own RunHooks (passed to the runner and to the nested run of the
agent tool) and from what the tools receive and return, never from the spans.
"""

import asyncio

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
from agents_hooks import Hooks
from client import Scenario, text, tool
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from scenarios import STANDARD, run_tool

REDACTED = globals().get("REDACTED", False)
# What a trace with inputs, outputs and messages hidden cannot carry: the request, the answer, the
# conversation, and the tool arguments and results (TOOL spans' input.value / output.value).
HIDDEN = ["input", "messages", "output", "tool_arguments", "tool_results"]

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())
s: Scenario  # the scenario being captured; the tools record into its request run
AGENT_TOOL = "booking_specialist"  # booking_agent called as a tool


@function_tool
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return run_tool(s, "search_flights", {"origin": origin, "destination": destination})


@function_tool
def book_flight(flight_id: str) -> str:
    """Book a flight."""
    return run_tool(s, "book_flight", {"flight_id": flight_id})


@function_tool
def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    return run_tool(s, "charge_card", {"amount": amount})


@function_tool
def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_tool(s, "delete_account", {"user_id": user_id})


def team(hooks: Hooks) -> dict[str, Agent]:
    """The agents of one request; the booking agent's tool form reports its nested run to the same hooks."""
    booking = Agent(
        name="booking_agent", instructions="You book flights.", model=model, tools=[search_flights, book_flight]
    )
    account = Agent(name="account_agent", instructions="You manage accounts.", model=model, tools=[delete_account])
    booking_tool = booking.as_tool(
        tool_name=AGENT_TOOL, tool_description="Ask the booking specialist to book a flight.", hooks=hooks
    )
    orchestrator = Agent(
        name="orchestrator_agent",
        instructions="You answer travellers, using the booking specialist for bookings.",
        model=model,
        tools=[booking_tool],
    )
    triage = Agent(
        name="triage_agent",
        instructions="Route travel requests.",
        model=model,
        handoffs=[booking, orchestrator, account],
    )
    travel = Agent(
        name="travel_agent",
        instructions="You are a travel assistant.",
        model=model,
        tools=[search_flights, book_flight, charge_card, delete_account],
    )
    return {agent.name: agent for agent in (booking, account, orchestrator, triage, travel)}


async def run(agent_name: str, request: str, multi: bool) -> None:
    request_run = s.run(agent_name, request)
    hooks = Hooks(request_run, AGENT_TOOL)
    try:
        result = await Runner.run(team(hooks)[agent_name], request, hooks=hooks)
        output, status = result.final_output, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(hooks.calls.values()), lacks=HIDDEN if REDACTED else None)
    if multi:
        request_run.setdefault("handoffs", [])
        request_run.update(nested_runs_allowed=True, note=hooks.note(agent_name))


BOOK = "I need to book flight UA123."
BOOKED = "Booked UA123. Confirmation: ABC123456"
MULTI = {
    "handoff": (
        "triage_agent",
        BOOK,
        [tool("transfer_to_booking_agent", {}), tool("book_flight", {"flight_id": "UA123"}), text(BOOKED)],
    ),
    "agent_as_tool": (
        "orchestrator_agent",
        BOOK,
        [
            tool("booking_specialist", {"input": "Book flight UA123."}),
            tool("book_flight", {"flight_id": "UA123"}),
            text(BOOKED),
            text("Your flight UA123 is booked; the confirmation is ABC123456."),
        ],
    ),
    "handoff_and_tool": (
        "triage_agent",
        BOOK,
        [
            tool("transfer_to_orchestrator_agent", {}),
            tool("booking_specialist", {"input": "Book flight UA123."}),
            tool("book_flight", {"flight_id": "UA123"}),
            text(BOOKED),
            text("Your flight UA123 is booked; the confirmation is ABC123456."),
        ],
    ),
    "forbidden_in_worker": (
        "triage_agent",
        "Please close my account, user 42.",
        [
            tool("transfer_to_account_agent", {}),
            tool("delete_account", {"user_id": "42"}),
            text("Account 42 is closed."),
        ],
    ),
}
SINGLE = {
    name: ("travel_agent", STANDARD[name][0][0], STANDARD[name][1]) for name in ("happy", "forbidden", "tool_error")
}


async def main() -> None:
    global s
    for name, (agent, request, replies) in (SINGLE if REDACTED else MULTI).items():
        with Scenario(name, replies) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(agent, request, multi=not REDACTED)
            provider.force_flush()


asyncio.run(main())
