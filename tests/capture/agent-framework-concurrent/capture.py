"""Microsoft Agent Framework's concurrent orchestration (`ConcurrentBuilder`): two agents answer the same request in
parallel and an aggregator joins their answers, with the framework's own GenAI and workflow spans.

metering_desk (read_meter, book_technician) and accounts_desk (waive_late_fee, which fails, tariff_quote and
delete_account) are Agents on `OpenAIChatCompletionClient`; the workflow fans the request out to both and its
aggregator (a callback, `with_aggregator`) answers with each desk's last message, one line per desk. The two
agents run at once; a chat middleware on each lets their model calls reach the scripted model in a fixed
interleaving (the scenario's `order`), so that each call gets its scripted reply: the agents still overlap, only
which of two concurrent requests goes first is pinned. Agent Framework instruments itself (on by default) through
the global OpenTelemetry providers, set here to SDK providers exporting OTLP/HTTP protobuf (traces, and log
records); message content is turned on the documented way, ENABLE_SENSITIVE_DATA=true. Each request is wrapped in
a `handle_request` span. Run as ../agent-framework-concurrent-default/capture.py (DEFAULT_SETTINGS=True), sensitive
data stays off, and every run's ground truth lists in `lacks` what that trace cannot carry.

The ground truth is the request run of the workflow, entered at its first participant (as for the sequential
orchestration): the user's request, the aggregated answer (which no span carries, each agent's own answer being
all the trace shows: the run lacks `output`), both agents' model calls (counted by the middleware),
the tool calls (recorded by the tools) in the order they ran, and no handoff (fanning out to parallel workers
transfers no control). In `accounts_failure` the model backend fails during accounts_desk's first turn, while
metering_desk is at work, and the workflow fails.
"""

import asyncio
import os

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # the -default source: sensitive data stays off
if not DEFAULT_SETTINGS:
    os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from agent_framework import Agent, chat_middleware  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from agent_framework_orchestrations import ConcurrentBuilder  # noqa: E402
from client import Scenario, each, failure, text, tool  # noqa: E402
from telemetry import exported, flush  # noqa: E402
from utility_desk import ACCOUNTS, METERING, desk_tools  # noqa: E402

tracer = exported("power-panel")  # Agent Framework traces (and logs) to the global providers

s: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = desk_tools(lambda: s)
CALLS: dict[str, int] = {}  # model calls each agent made, counted by its chat middleware
order: list[str] = []  # the agents whose model calls go next, in turn, for the scenario in progress
turn = asyncio.Condition()
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry


def in_turn(agent_name: str):
    """Count the agent's model calls and let each reach the model only when `order` says it is the agent's turn."""

    @chat_middleware
    async def wait_for_turn(context, call_next):
        CALLS[agent_name] = CALLS.get(agent_name, 0) + 1
        async with turn:
            await asyncio.wait_for(turn.wait_for(lambda: not order or order[0] == agent_name), 30)
        try:
            await call_next()
        finally:
            async with turn:
                if order and order[0] == agent_name:
                    order.pop(0)
                turn.notify_all()

    return wait_for_turn


def make_agent(name: str, instructions: str, tools: tuple[str, ...]) -> Agent:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])
    return Agent(
        client,
        instructions,
        name=name,
        description=instructions,
        tools=[TOOLS[t] for t in tools],
        middleware=[in_turn(name)],
    )


def one_line_per_desk(results) -> str:
    """The aggregated answer: each desk's last message, one line per desk."""
    return "\n".join(f"{r.executor_id}: {r.agent_response.messages[-1].text}" for r in results)


def workflow():
    participants = [
        make_agent("metering_desk", "You read electricity meters and book technician visits.", METERING),
        make_agent("accounts_desk", "You waive fees, quote tariffs and close customer accounts.", ACCOUNTS),
    ]
    return ConcurrentBuilder(participants=participants).with_aggregator(one_line_per_desk).build()


async def run(request: str) -> None:
    truth = s.run("metering_desk", request)
    CALLS.clear()
    try:
        events = await workflow().run(request)
        outputs = events.get_outputs()
        output, status = (str(outputs[-1]) if outputs else None), "ok"
        if not outputs:
            print(f"   no output; state {events.get_final_state()}")
            status = "error"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    # the aggregator's answer is on no span (each agent's last message is): the trace cannot carry the output
    lacks = LACKS if DEFAULT_SETTINGS else ["output"] if output is not None else None
    s.finish(output, status, sum(CALLS.values()), lacks=lacks)
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is the concurrent workflow's, with both agents' model and tool calls; model calls per "
        "agent: " + ", ".join(f"{name} {n}" for name, n in CALLS.items()) + ".",
    )


M, A = "metering_desk", "accounts_desk"
SCENARIOS = {
    "meter_and_tariff": (
        "My meter M-88 seems stuck; check it, and quote the green tariff for 340 kWh a month.",
        [
            tool("read_meter", {"meter_id": "M-88"}),
            tool("tariff_quote", {"kwh": 340}),
            text("M-88 reads 4120 kWh and shows no fault."),
            text("340 kWh a month costs 71 EUR on the green tariff."),
        ],
    ),
    "fee_waiver_error": (
        "Check meter M-88 and waive the late fee on invoice INV-2207.",
        [
            tool("read_meter", {"meter_id": "M-88"}),
            tool("waive_late_fee", {"invoice_id": "INV-2207"}),
            text("M-88 reads 4120 kWh and shows no fault."),
            text("Sorry, the late fee on INV-2207 could not be waived: the fee ledger is closed for month-end."),
        ],
    ),
    "close_account": (
        "Take a final reading of meter M-88 and close my power account, customer c-5521.",
        [
            tool("read_meter", {"meter_id": "M-88"}),
            tool("delete_account", {"user_id": "c-5521"}),
            text("Final reading of M-88: 4120 kWh."),
            text("Your power account c-5521 has been closed."),
        ],
    ),
    "accounts_failure": (
        "Book a technician for meter M-88 on Tuesday and quote the green tariff for 340 kWh a month.",
        [
            tool("book_technician", {"meter_id": "M-88", "day": "Tuesday"}),
            failure(503, "model backend overloaded"),
        ],
    ),
}


TURNS = {  # the order in which the agents' model calls reach the model
    "meter_and_tariff": [M, A, M, A],
    "fee_waiver_error": [M, A, M, A],
    "close_account": [M, A, M, A],
    "accounts_failure": [M, A, M],
}


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):
        order[:] = TURNS[s.name]
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        flush()


asyncio.run(main())
