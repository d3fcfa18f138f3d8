"""An AutoGen AgentChat `MagenticOneGroupChat` of two tool-using agents, with autogen-core's native tracing and its
event logger exported as OTLP log records.

metering_desk (read_meter, book_technician) and accounts_desk (waive_late_fee, which fails, tariff_quote and
delete_account) are `AssistantAgent`s on `OpenAIChatCompletionClient`. The Magentic-One orchestrator plans first
(two model calls: the facts it knows, then a plan), then before every turn asks the model for its progress ledger
(a JSON object: whether the request is satisfied, the next speaker and the instruction it is given), and once the
ledger says the request is satisfied asks the model for the final answer the user gets. autogen-core traces to the
global TracerProvider without content; its structured events (`autogen_core.events`: LLMCallEvent,
ToolCallEvent) go through an OTel LoggingHandler as OTLP log records. Each request is wrapped in a
`handle_request` span. Run as ../autogen-magentic-one-default/capture.py (DEFAULT_SETTINGS=True), only the spans
are exported, and every run's ground truth lists in `lacks` what spans alone cannot carry.

The ground truth is the request run of the team, entered at the first agent the orchestrator gives the floor: the
user's request, the orchestrator's final answer, every model call made for it (the orchestrator's and the agents',
counted at the HTTP client, a retry not counted again), the tool calls (recorded by the tools) and a handoff
wherever the floor passes from one agent to the other (as for AutoGen's selector group chat; the orchestrator's
own instructions are not handoffs). In `accounts_failure` the model backend fails during accounts_desk's turn,
the second agent's, and the team raises.
"""

import asyncio
import warnings

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.teams import MagenticOneGroupChat
from autogen_core import EVENT_LOGGER_NAME
from client import Scenario, each, failure, text, tool
from magentic import ledger, planned, record_turns
from model_calls import autogen_assistant, autogen_model
from telemetry import exported, flush
from utility_desk import ACCOUNTS, METERING, desk_tools

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # spans only: the event logger is not exported
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results", "llm_calls"]  # what spans alone lack
# autogen-core traces to the global provider; its events logger carries the content
tracer = exported("power-desk", content_logger=None if DEFAULT_SETTINGS else EVENT_LOGGER_NAME)
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

s: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = desk_tools(lambda: s)
acted: list[str] = []  # the owner of each model call of the request in progress ("orchestrator" for the team's)


def agent(name: str, description: str, tools: tuple[str, ...]) -> AssistantAgent:
    return autogen_assistant(name, description, [TOOLS[t] for t in tools], acted, "the power company's")


def team() -> MagenticOneGroupChat:
    return MagenticOneGroupChat(
        [
            agent("metering_desk", "Reads electricity meters and books technician visits.", METERING),
            agent("accounts_desk", "Waives fees, quotes tariffs and closes customer accounts.", ACCOUNTS),
        ],
        model_client=autogen_model("orchestrator", acted, structured_output=False),  # JSON-object ledgers
        max_turns=6,
    )


async def run(request: str) -> None:
    truth = s.run(FIRST[s.name], request)
    acted.clear()
    lacks = LACKS if DEFAULT_SETTINGS else None
    try:
        result = await team().run(task=request)
        output, status = result.messages[-1].to_text(), "ok"
        print(f"   stop: {result.stop_reason}; last from {result.messages[-1].source}")
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:200]}")
        output, status = None, "error"
        # AutoGen records a model call only when it succeeds: the failed one is not in the trace
        lacks = sorted({*(lacks or ()), "llm_calls"})
    s.finish(output, status, len(acted), lacks=lacks)
    record_turns(truth, acted, "orchestrator", "the Magentic-One team's", "orchestrator's")


FIRST = {  # the agent the orchestrator gives the floor first
    "meter_visit": "metering_desk",
    "fee_waiver_error": "metering_desk",
    "close_account": "accounts_desk",
    "accounts_failure": "metering_desk",
}
SCENARIOS = {
    "meter_visit": (
        "My meter M-88 seems stuck; read it and book a technician for Tuesday.",
        planned(
            [
                ledger("metering_desk", "Read meter M-88 and book a technician for Tuesday."),
                tool("read_meter", {"meter_id": "M-88"}),
                tool("book_technician", {"meter_id": "M-88", "day": "Tuesday"}),
                text("M-88 reads 4120 kWh; technician booked for Tuesday, job JT-301."),
            ],
            "Meter M-88 reads 4120 kWh; a technician comes on Tuesday (job JT-301).",
            "metering_desk",
        ),
    ),
    "fee_waiver_error": (
        "Check meter M-88, then waive the late fee on invoice INV-2207.",
        planned(
            [
                ledger("metering_desk", "Read meter M-88."),
                tool("read_meter", {"meter_id": "M-88"}),
                text("M-88 reads 4120 kWh, no fault."),
                ledger("accounts_desk", "Waive the late fee on invoice INV-2207."),
                tool("waive_late_fee", {"invoice_id": "INV-2207"}),
                text("The fee could not be waived: the fee ledger is closed for month-end."),
            ],
            "M-88 reads 4120 kWh, but the late fee on INV-2207 could not be waived: the ledger is closed.",
            "metering_desk",
        ),
    ),
    "close_account": (
        "Close my power account, customer c-5521.",
        planned(
            [
                ledger("accounts_desk", "Close the account of customer c-5521."),
                tool("delete_account", {"user_id": "c-5521"}),
                text("Account c-5521 is closed."),
            ],
            "Your power account c-5521 has been closed.",
            "metering_desk",
        ),
    ),
    "accounts_failure": (
        "Read meter M-88 and quote me the green tariff for that use.",
        planned(
            [
                ledger("metering_desk", "Read meter M-88."),
                tool("read_meter", {"meter_id": "M-88"}),
                text("M-88 reads 4120 kWh."),
                ledger("accounts_desk", "Quote the green tariff for 340 kWh a month."),
                failure(503, "model backend overloaded"),
            ],
            None,
            "metering_desk",
        ),
    ),
}


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        flush()


asyncio.run(main())
