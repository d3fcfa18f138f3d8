"""pydantic-ai agent delegation traced by pydantic-ai's own instrumentation (the `Instrumentation`
capability on each agent, what `instrument=True` was before 2.x; no Logfire).

`concierge` has hotel tools and two delegation tools: `ask_researcher` runs `rate_researcher` and
`consult_billing` runs `billing_clerk`, each a separate agent run inside the tool, sharing the caller's
usage (`usage=ctx.usage`), whose answer is the tool's result. A failing tool reports its failure to the model
with `ModelRetry`, pydantic-ai's way. Spans go through the global OTel SDK TracerProvider to OTLP/HTTP;
content is on by default (include_content). Each request is wrapped in a `handle_request` span.

The ground truth is one request run per user request, entered at concierge, recorded the way an agent called
as a tool is: every agent's model calls (a before-model-request hook), the tool calls in the order they
started (the delegation tool with the request it got and the delegate's answer, then the delegate's own
calls) and the answer the user got. The delegate's own run is nested, beneath the delegation tool.
"""

import asyncio
import os

from client import Scenario, failure, text, tool
from hotel import FUNCTIONS, REQUESTS
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai_count import counted

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-concierge"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("hotel-concierge")
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))
RUN: dict  # the ground truth of the request being served


def agent(name: str, instructions: str) -> Agent:
    return Agent(model, name=name, instructions=instructions, capabilities=[Instrumentation(), counted(lambda: RUN)])


concierge = agent("concierge", "You are a hotel concierge. Ask the researcher for rates; consult billing for money.")
rate_researcher = agent("rate_researcher", "You research nightly hotel rates.")
billing_clerk = agent("billing_clerk", "You refund deposits and close guest accounts.")


def run_tool(name: str, **arguments) -> str:
    """Run a hotel tool and record what it received and returned; a failure goes back to the model."""
    entry = {"name": name, "arguments": arguments, "result": None, "error": False}
    RUN["tool_calls"].append(entry)
    try:
        entry["result"] = FUNCTIONS[name](**arguments)
    except RuntimeError as exc:
        entry["error"] = True
        raise ModelRetry(str(exc)) from exc
    return entry["result"]


@concierge.tool_plain
def find_rooms(city: str) -> str:
    """Free hotel rooms in a city."""
    return run_tool("find_rooms", city=city)


@concierge.tool_plain
def reserve_room(room_id: str) -> str:
    """Reserve a hotel room by id."""
    return run_tool("reserve_room", room_id=room_id)


@rate_researcher.tool_plain
def quote_rate(city: str) -> str:
    """The nightly rate of the hotel in a city."""
    return run_tool("quote_rate", city=city)


@billing_clerk.tool_plain
def refund_deposit(amount: int) -> str:
    """Refund the guest's deposit."""
    return run_tool("refund_deposit", amount=amount)


@billing_clerk.tool_plain
def delete_account(user_id: str) -> str:
    """Delete a guest's account."""
    return run_tool("delete_account", user_id=user_id)


async def delegate(delegate_agent: Agent, ctx: RunContext, name: str, arguments: dict, request: str) -> str:
    entry = {"name": name, "arguments": arguments, "result": None, "error": False}
    RUN["tool_calls"].append(entry)
    result = await delegate_agent.run(request, usage=ctx.usage)
    entry["result"] = result.output
    return result.output


@concierge.tool
async def ask_researcher(ctx: RunContext, question: str) -> str:
    """Ask the rate researcher about nightly hotel rates."""
    return await delegate(rate_researcher, ctx, "ask_researcher", {"question": question}, question)


@concierge.tool
async def consult_billing(ctx: RunContext, issue: str) -> str:
    """Ask the billing clerk to handle a refund or an account closure."""
    return await delegate(billing_clerk, ctx, "consult_billing", {"issue": issue}, issue)


SCENARIOS = {
    "happy": (REQUESTS["happy"][0][0], REQUESTS["happy"][1]),
    "delegation": (
        "What does a night in Lisbon cost? Then reserve LIS-204.",
        [
            tool("ask_researcher", {"question": "Nightly rate in Lisbon"}),
            tool("quote_rate", {"city": "Lisbon"}),
            text("Lisbon: 140 EUR a night."),
            tool("reserve_room", {"room_id": "LIS-204"}),
            text("A night in Lisbon is 140 EUR; LIS-204 is reserved, reference R-88123."),
        ],
    ),
    "delegate_tool_error": (
        REQUESTS["tool_error"][0][0],
        [
            tool("consult_billing", {"issue": "Refund the guest's 80 euro deposit"}),
            tool("refund_deposit", {"amount": 80}),
            text("The refund failed: the refund window is closed."),
            text("I could not refund it: the refund window is closed."),
        ],
    ),
    "forbidden_in_delegate": (
        REQUESTS["forbidden"][0][0],
        [
            tool("consult_billing", {"issue": "Close the account of customer c-77"}),
            tool("delete_account", {"user_id": "c-77"}),
            text("Account c-77 is closed."),
            text("Your profile c-77 has been removed."),
        ],
    ),
    "agent_error": (
        REQUESTS["agent_error"][0][0],
        [tool("find_rooms", {"city": "Atlantis"}), failure(500, "model backend unavailable")],
    ),
}


async def serve(s: Scenario, request: str) -> None:
    global RUN
    RUN = s.run("concierge", request)
    RUN.update(handoffs=[], nested_runs_allowed=True, llm_calls=0)
    try:
        result = await concierge.run(request)
        output, status = result.output, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, RUN["llm_calls"])


async def main() -> None:
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await serve(s, request)
            provider.force_flush()


asyncio.run(main())
