"""pydantic-ai programmatic hand-off traced by Pydantic Logfire (`logfire.instrument_pydantic_ai()`).

The application serves each request with two agents in turn, as pydantic-ai's multi-agent docs show for
programmatic hand-off: `triage_desk` (read_meter) runs first; the application then hands its whole message
history to `account_desk` (book_engineer, waive_late_fee, delete_account), whose answer the customer gets. A
failing tool reports its failure to the model with `ModelRetry`. Logfire exports to OTEL_EXPORTER_OTLP_ENDPOINT
itself (`send_to_logfire=False`, OTLP/HTTP protobuf); each request is a Logfire span `handle_request`, with content
on (Logfire's default for pydantic-ai).

The ground truth is one request run per user request, entered at triage_desk: the user's request, account_desk's
answer (none when it failed), both agents' model calls (a before-model-request hook) and tool calls (recorded by
the tools), and no handoff: no agent transferred control, the application moved the conversation on, as a
sequential workflow moves from one step to the next (the convention of the sequential captures). Each agent's own
run is nested.

Run as ../pydantic-ai-handoff-logfire-nocontent/capture.py (NO_CONTENT=True), the same requests are traced with
`instrument_pydantic_ai(include_content=False)`, and every run lists in `lacks` what that trace cannot carry.
"""

import asyncio
import functools
import os

import logfire
from client import Scenario, failure, text, tool
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai_count import counted
from utility import utility_tools

logfire.configure(service_name="utility-service", send_to_logfire=False, console=False, metrics=False)
NO_CONTENT = globals().get("NO_CONTENT", False)
NO_CONTENT_LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]
logfire.instrument_pydantic_ai(include_content=not NO_CONTENT)
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))
s: Scenario  # the scenario being captured; the tools record into its request run
RUN: dict  # the ground truth of the request being served
TOOLS = utility_tools(lambda: s)


def agent(name: str, instructions: str, tool_names: list[str]) -> Agent:
    """An agent whose tools report a failure to the model with ModelRetry."""
    built = Agent(model, name=name, instructions=instructions, capabilities=[counted(lambda: RUN)])
    for tool_name in tool_names:
        built.tool_plain(retrying(TOOLS[tool_name]))
    return built


def retrying(function):
    """The tool function, its RuntimeError told to the model as a ModelRetry (same name, signature, docstring)."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except RuntimeError as exc:
            raise ModelRetry(str(exc)) from exc

    return wrapper


triage_desk = agent(
    "triage_desk", "You triage energy customers' requests; read their meter when one is named.", ["read_meter"]
)
account_desk = agent(
    "account_desk",
    "You carry out what triage found: engineer visits, late-fee waivers, account closures.",
    ["book_engineer", "waive_late_fee", "delete_account"],
)

SCENARIOS = {
    "happy": (
        "Read meter M-4471 and book an engineer visit for Tuesday morning.",
        [
            tool("read_meter", {"meter_id": "M-4471"}),
            text("Meter M-4471 reads 48213 kWh; the customer wants an engineer on Tuesday morning."),
            tool("book_engineer", {"meter_id": "M-4471", "slot": "Tuesday morning"}),
            text("Your meter M-4471 reads 48213 kWh and an engineer visits on Tuesday morning, job EV-3391."),
        ],
    ),
    "forbidden": (
        "Read meter M-5120 for my final bill and close my account, customer u-310.",
        [
            tool("read_meter", {"meter_id": "M-5120"}),
            text("Final reading of M-5120 is 48213 kWh; close the account of customer u-310."),
            tool("delete_account", {"user_id": "u-310"}),
            text("Your final reading is 48213 kWh and account u-310 is closed."),
        ],
    ),
    "tool_error": (
        "Please waive the late fee on invoice INV-902.",
        [
            text("The customer asks for the late fee on invoice INV-902 to be waived."),
            tool("waive_late_fee", {"invoice_id": "INV-902"}),
            text("Sorry, the late fee on INV-902 cannot be waived right now: the fee ledger is sealed."),
        ],
    ),
    "agent_error": (
        "Read meter M-6002 and book an engineer for Friday.",
        [
            tool("read_meter", {"meter_id": "M-6002"}),
            text("Meter M-6002 reads 48213 kWh; the customer wants an engineer on Friday."),
            failure(500, "model backend unavailable"),
        ],
    ),
}


async def serve(request: str) -> None:
    """One request: triage_desk, then account_desk continuing its conversation."""
    global RUN
    RUN = s.run("triage_desk", request)
    RUN.update(llm_calls=0, nested_runs_allowed=True, handoffs=[])
    try:
        triaged = await triage_desk.run(request)
        done = await account_desk.run(
            "Carry out what the customer asked, as triaged above.", message_history=triaged.all_messages()
        )
        output, status = done.output, "ok"
    except Exception as exc:
        print(f"   request failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, RUN["llm_calls"], lacks=NO_CONTENT_LACKS if NO_CONTENT else None)


async def main() -> None:
    global s
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with logfire.span("handle_request"):
                await serve(request)
            logfire.force_flush()


asyncio.run(main())
