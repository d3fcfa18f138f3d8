"""Google ADK's own GenAI spans on a root agent that uses another agent as a tool and transfers to a sub-agent.

`front_office` (LlmAgent) has hotel tools, `rate_researcher` as a tool (`AgentTool`: the researcher runs its
own inner invocation, with its own tool, and its answer is the tool's result) and `billing_desk` as a
sub-agent (`sub_agents`: the model calls ADK's transfer tool, after which billing_desk acts and answers the
user in the same invocation). ADK writes its spans through the global TracerProvider (OTLP/HTTP protobuf);
message content is on (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY). A raising tool is
recovered by `on_tool_error_callback`, which answers the model `{"error": ...}` (ADK otherwise aborts).

The ground truth is one request run per user request, entered at front_office: every agent's model calls
(counted by before_model_callback), the tool calls in the order they started (the agent tool with the
request it got and the researcher's answer, then the researcher's own calls), the transfer as a handoff,
never as a tool call, and the answer the user got from the runner's final event.
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

from adk_runner import final_answer
from client import Scenario, failure, text, tool
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools.agent_tool import AgentTool
from hotel import REQUESTS, run_recorded
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-front-office"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("hotel-front-office")

S: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls per agent in the current request
RESEARCHER = "rate_researcher"


def find_rooms(city: str) -> str:
    """Free hotel rooms in a city."""
    return run_recorded(S, "find_rooms", {"city": city})


def reserve_room(room_id: str) -> str:
    """Reserve a hotel room by id."""
    return run_recorded(S, "reserve_room", {"room_id": room_id})


def refund_deposit(amount: int) -> str:
    """Refund the guest's deposit."""
    return run_recorded(S, "refund_deposit", {"amount": amount})


def delete_account(user_id: str) -> str:
    """Delete a guest's account."""
    return run_recorded(S, "delete_account", {"user_id": user_id})


def quote_rate(city: str) -> str:
    """The nightly rate of the hotel in a city."""
    return run_recorded(S, "quote_rate", {"city": city})


def count_call(callback_context, llm_request):
    CALLS[callback_context.agent_name] = CALLS.get(callback_context.agent_name, 0) + 1


AGENT_TOOL_ENTRY: dict = {}


def agent_tool_starts(tool, args, tool_context):
    """The agent tool's call enters the request's tool calls when it starts (the researcher's calls follow)."""
    if tool.name == RESEARCHER:
        AGENT_TOOL_ENTRY.clear()
        AGENT_TOOL_ENTRY.update(name=tool.name, arguments=dict(args), result=None, error=False)
        S.runs[-1]["tool_calls"].append(AGENT_TOOL_ENTRY)


def agent_tool_ends(tool, args, tool_context, tool_response):
    if tool.name == RESEARCHER:
        AGENT_TOOL_ENTRY["result"] = str(tool_response)


def handed_over(tool, args, tool_context, tool_response):
    """ADK's transfer tool, as it ran: a handoff of the request, not one of its tool calls."""
    if tool.name == "transfer_to_agent":
        S.runs[-1]["handoffs"].append({"from": tool_context.agent_name, "to": args["agent_name"]})
    agent_tool_ends(tool, args, tool_context, tool_response)


def recover(tool, args, tool_context, error):
    return {"error": str(error)}


def model():
    return LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"])


rate_researcher = LlmAgent(
    name=RESEARCHER,
    model=model(),
    instruction="You research nightly hotel rates.",
    description="Finds the nightly rate of the hotel in a city.",
    tools=[quote_rate],
    before_model_callback=count_call,
)
billing_desk = LlmAgent(
    name="billing_desk",
    model=model(),
    instruction="You handle refunds and account closures.",
    description="Refunds deposits and closes guest accounts.",
    tools=[refund_deposit, delete_account],
    before_model_callback=count_call,
    on_tool_error_callback=recover,
)
front_office = LlmAgent(
    name="front_office",
    model=model(),
    instruction="You are a hotel front office. Use the rate researcher for rates; send billing to billing_desk.",
    tools=[find_rooms, reserve_room, AgentTool(agent=rate_researcher)],
    sub_agents=[billing_desk],
    before_model_callback=count_call,
    before_tool_callback=agent_tool_starts,
    after_tool_callback=handed_over,
    on_tool_error_callback=recover,
)

SCENARIOS = {
    "happy": (REQUESTS["happy"][0][0], REQUESTS["happy"][1]),
    "agent_as_tool": (
        "What does a night in Lisbon cost? Then reserve LIS-204.",
        [
            tool(RESEARCHER, {"request": "Nightly rate in Lisbon"}),
            tool("quote_rate", {"city": "Lisbon"}),
            text("Lisbon: 140 EUR a night."),
            tool("reserve_room", {"room_id": "LIS-204"}),
            text("A night in Lisbon is 140 EUR; LIS-204 is reserved, reference R-88123."),
        ],
    ),
    "transfer_tool_error": (
        REQUESTS["tool_error"][0][0],
        [
            tool("transfer_to_agent", {"agent_name": "billing_desk"}),
            tool("refund_deposit", {"amount": 80}),
            text("I could not refund it: the refund window is closed."),
        ],
    ),
    "forbidden_after_transfer": (
        REQUESTS["forbidden"][0][0],
        [
            tool("transfer_to_agent", {"agent_name": "billing_desk"}),
            tool("delete_account", {"user_id": "c-77"}),
            text("Your profile c-77 has been removed."),
        ],
    ),
    "agent_error": (
        REQUESTS["agent_error"][0][0],
        [tool("find_rooms", {"city": "Atlantis"}), failure(500, "model backend unavailable")],
    ),
}


async def serve(request: str) -> None:
    """One user request through an InMemoryRunner at front_office; records its ground truth."""
    run = S.run("front_office", request)
    run.update(handoffs=[], nested_runs_allowed=True)
    CALLS.clear()
    status = "ok"
    try:
        answer = await final_answer(front_office, request, "hotel", "guest-1")
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        answer, status = None, "error"
    S.finish(answer, status, sum(CALLS.values()))
    run["note"] = f"Model calls per agent: {dict(CALLS)}."


async def main() -> None:
    global S
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as S:
            with tracer.start_as_current_span("handle_request"):
                await serve(request)
            provider.force_flush()


asyncio.run(main())
