"""OpenAI Agents SDK multi-agent requests traced by Traceloop's opentelemetry-instrumentation-openai-agents.

Each scenario is one request (one `Runner.run` inside a `handle_request` span) served by several agents
whose transfer tools carry names of their own: `concierge` hands over with `handoff(...,
tool_name_override=...)` (`escalate_to_billing`, `route_to_accounts`, `route_to_planning`), and `planner`
calls `researcher` as a tool (`researcher.as_tool(tool_name="ask_researcher")`). The tools are hotel,
refund and account tools; `refund_payment` fails, and in `planner_failure` the model backend fails after
planner's first tool call (the request fails).

The ground truth is the request run: the entry agent, the user's request, the answer the user got,
every agent's model calls and non-transfer tool calls in the order they started (the agent tool's call
first, its agent's calls after it), and the handoffs. It comes from the SDK's own RunHooks (given to the
runner and to the agent tool's nested run) and from what the tools received and returned, never from
the spans; each agent's own run is described in the note.

Run as ../openai-agents-otel-contrib/capture.py (CONTRIB=True), the same requests are traced by the
OpenTelemetry contrib package opentelemetry-instrumentation-openai-agents-v2 instead (same module path).
"""

import asyncio

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    function_tool,
    handoff,
    set_trace_processors,
)
from agents_hooks import Hooks
from client import Scenario, failure, text, tool
from openai import AsyncOpenAI
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
if globals().get("CONTRIB", False):  # the OTel contrib package, same module path, in its own environment
    set_trace_processors([])  # drop the SDK's own processor, which would send the traces to OpenAI
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
else:  # Traceloop's, replacing the SDK's own processor
    OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk")
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI())
s: Scenario  # the scenario being captured; the tools record into its request run
AGENT_TOOL = "ask_researcher"


def recorded(name: str, arguments: dict, result: str | None, failure: str | None = None) -> str:
    """Record what a tool received and returned (or that it failed, re-raised for the SDK to handle)."""
    s.tool(name, arguments, result, error=failure is not None)
    if failure:
        raise RuntimeError(failure)
    return result


@function_tool
def find_hotels(city: str) -> str:
    """Find hotels in a city."""
    return recorded("find_hotels", {"city": city}, f"H-77 Hotel Lumiere, {city}, 140 EUR a night")


@function_tool
def reserve_room(hotel_id: str, nights: int) -> str:
    """Reserve a room in a hotel."""
    return recorded("reserve_room", {"hotel_id": hotel_id, "nights": nights}, f"reserved {hotel_id}, code RZ-9081")


@function_tool
def refund_payment(order_id: str) -> str:
    """Refund a payment."""
    return recorded("refund_payment", {"order_id": order_id}, None, failure="refund window closed")


@function_tool
def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return recorded("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


def team(hooks: Hooks) -> dict[str, Agent]:
    researcher = Agent(name="researcher", instructions="You research hotels.", model=model, tools=[find_hotels])
    planner = Agent(
        name="planner",
        instructions="You plan stays: ask the researcher, then reserve.",
        model=model,
        tools=[
            researcher.as_tool(
                tool_name=AGENT_TOOL, tool_description="Ask the researcher to find hotels.", hooks=hooks
            ),
            reserve_room,
        ],
    )
    billing = Agent(name="billing_desk", instructions="You handle refunds.", model=model, tools=[refund_payment])
    accounts = Agent(name="account_desk", instructions="You manage accounts.", model=model, tools=[delete_account])
    concierge = Agent(
        name="concierge",
        instructions="Route each guest request to the right desk.",
        model=model,
        handoffs=[
            handoff(billing, tool_name_override="escalate_to_billing"),
            handoff(accounts, tool_name_override="route_to_accounts"),
            handoff(planner, tool_name_override="route_to_planning"),
        ],
    )
    return {agent.name: agent for agent in (researcher, planner, billing, accounts, concierge)}


async def run(agent_name: str, request: str) -> None:
    request_run = s.run(agent_name, request)
    request_run["handoffs"] = []
    hooks = Hooks(request_run, AGENT_TOOL)
    try:
        result = await Runner.run(team(hooks)[agent_name], request, hooks=hooks)
        output, status = result.final_output, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(hooks.calls.values()))
    request_run.update(nested_runs_allowed=True, note=hooks.note(agent_name))


STAY = "Find me a hotel in Lisbon for 3 nights and reserve it."
RESERVED = "Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."
SCENARIOS = {
    "stay_agent_tool": (
        "planner",
        STAY,
        [
            tool(AGENT_TOOL, {"input": "Hotels in Lisbon"}),
            tool("find_hotels", {"city": "Lisbon"}),
            text("H-77 Hotel Lumiere, 140 EUR a night."),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text(RESERVED),
        ],
    ),
    "refund_escalation": (
        "concierge",
        "I want a refund for order O-5521.",
        [
            tool("escalate_to_billing", {}),
            tool("refund_payment", {"order_id": "O-5521"}),
            text("Sorry, the refund window for order O-5521 has closed."),
        ],
    ),
    "close_account": (
        "concierge",
        "Please close my account, user 42.",
        [
            tool("route_to_accounts", {}),
            tool("delete_account", {"user_id": "42"}),
            text("Account 42 is closed."),
        ],
    ),
    "handoff_then_agent_tool": (
        "concierge",
        STAY,
        [
            tool("route_to_planning", {}),
            tool(AGENT_TOOL, {"input": "Hotels in Lisbon"}),
            tool("find_hotels", {"city": "Lisbon"}),
            text("H-77 Hotel Lumiere, 140 EUR a night."),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text(RESERVED),
        ],
    ),
    "planner_failure": (
        "concierge",
        STAY,
        [
            tool("route_to_planning", {}),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            failure(500, "model backend unavailable"),
        ],
    ),
}


async def main() -> None:
    global s
    for name, (agent, request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(agent, request)
            provider.force_flush()


asyncio.run(main())
