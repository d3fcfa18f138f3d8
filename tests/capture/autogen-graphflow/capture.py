"""An AutoGen AgentChat `GraphFlow` (a `DiGraphBuilder` graph of three tool-using agents, one conditional edge), with
autogen-core's native tracing and its event logger exported as OTLP log records.

grid_surveyor (read_meter, check_outage), repair_dispatcher (open_repair) and arrears_officer (waive_late_fee,
which fails, and delete_account) are `AssistantAgent`s on `OpenAIChatCompletionClient`. The graph runs
grid_surveyor, then repair_dispatcher, then arrears_officer only when the dispatcher's answer contains
`ARREARS` (the one conditional edge; otherwise the flow ends after the dispatcher). No agent chooses the next
one by a tool: the flow's graph passes the floor. autogen-core traces to the global TracerProvider without
content; its structured events (`autogen_core.events`: LLMCallEvent, ToolCallEvent) go through an OTel
LoggingHandler as OTLP log records. Each request is wrapped in a `handle_request` span. Run as
../autogen-graphflow-default/capture.py (DEFAULT_SETTINGS=True), only the spans are exported, and every run's ground
truth lists in `lacks` what spans alone cannot carry.

The ground truth is the request run of the flow, entered at grid_surveyor: the user's request, the last agent's
answer, every agent's model calls (counted at each agent's HTTP client, a retry not counted again), the tool
calls (recorded by the tools) and a handoff wherever the floor passes from one agent to the next (as for
AutoGen's other group chats, checked against the flow's own message sources where it returns). In
`arrears_failure` the model backend fails during arrears_officer's turn, the third agent's, and the flow raises.
"""

import asyncio
import warnings
from itertools import pairwise

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import BaseChatMessage
from autogen_agentchat.teams import DiGraphBuilder, GraphFlow
from autogen_core import EVENT_LOGGER_NAME
from client import Scenario, failure, text, tool
from grid_desk import grid_tools
from model_calls import autogen_assistant
from telemetry import each_handled, exported

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # spans only: the event logger is not exported
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results", "llm_calls"]  # what spans alone lack
# autogen-core traces to the global provider; its events logger carries the content
tracer = exported("grid-flow", content_logger=None if DEFAULT_SETTINGS else EVENT_LOGGER_NAME)
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

s: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = grid_tools(lambda: s)
acted: list[str] = []  # the agent behind each model call of the request in progress
ESCALATE = "ARREARS"  # in the dispatcher's answer, the condition of the edge to arrears_officer


def agent(name: str, description: str, tools: tuple[str, ...]) -> AssistantAgent:
    return autogen_assistant(name, description, [TOOLS[t] for t in tools], acted, "the power grid's")


def flow() -> GraphFlow:
    surveyor = agent("grid_surveyor", "Reads meters and checks the grid for outages.", ("read_meter", "check_outage"))
    dispatcher = agent(
        "repair_dispatcher",
        f"Opens repair jobs; says {ESCALATE} when a fee or an account needs the arrears officer.",
        ("open_repair",),
    )
    officer = agent("arrears_officer", "Waives late fees and closes accounts.", ("waive_late_fee", "delete_account"))
    graph = DiGraphBuilder()
    graph.add_node(surveyor).add_node(dispatcher).add_node(officer)
    graph.add_edge(surveyor, dispatcher)
    graph.add_edge(dispatcher, officer, condition=ESCALATE)
    return GraphFlow(participants=graph.get_participants(), graph=graph.build())


async def run(request: str) -> None:
    truth = s.run("grid_surveyor", request)
    acted.clear()
    lacks = LACKS if DEFAULT_SETTINGS else None
    try:
        result = await flow().run(task=request)
        said = [m for m in result.messages if isinstance(m, BaseChatMessage) and m.source != "user"]
        speakers = [m.source for m in said]
        output, status = said[-1].to_text(), "ok"
        print(f"   stop: {result.stop_reason}; speakers {speakers}")
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:200]}")
        speakers, output, status = None, None, "error"
        # AutoGen records a model call only when it succeeds: the failed one is not in the trace
        lacks = sorted({*(lacks or ()), "llm_calls"})
    handoffs = [{"from": a, "to": b} for a, b in pairwise(acted) if a != b]
    assert speakers is None or handoffs == [{"from": a, "to": b} for a, b in pairwise(speakers) if a != b]
    s.finish(output, status, len(acted), lacks=lacks)
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note="The request run is the graph flow's, with every agent's model and tool calls; the flow's graph "
        f"makes no model call; model calls, by whom: {acted}.",
    )


SCENARIOS = {
    "repair_visit": (
        "Meter M-41 at postcode 1190 shows a blank display; check it and send someone.",
        [
            tool("read_meter", {"meter_id": "M-41"}),
            tool("check_outage", {"postcode": "1190"}),
            text("M-41 reads 4312 kWh (2 days ago) and the grid at 1190 is up: the meter itself is at fault."),
            tool("open_repair", {"meter_id": "M-41", "fault": "blank display"}),
            text("Repair job RJ-5081 is open for M-41; a crew will replace the display."),
        ],
    ),
    "fee_waiver_error": (
        "Read meter M-41 and waive the late fee on invoice INV-3310; the reading was wrong.",
        [
            tool("read_meter", {"meter_id": "M-41"}),
            text("M-41 reads 4312 kWh; the earlier reading was too high."),
            text(f"No repair needed. {ESCALATE}: waive the late fee on INV-3310."),
            tool("waive_late_fee", {"invoice_id": "INV-3310"}),
            text("Sorry, the late fee on INV-3310 could not be waived: the billing ledger is sealed."),
        ],
    ),
    "close_account": (
        "I am moving out; close my grid account, customer g-7730.",
        [
            text("No meter or grid check is needed to close an account."),
            text(f"No repair needed. {ESCALATE}: close account g-7730."),
            tool("delete_account", {"user_id": "g-7730"}),
            text("Your grid account g-7730 is closed."),
        ],
    ),
    "arrears_failure": (
        "Check for an outage at 1190, then waive the late fee on INV-3310.",
        [
            tool("check_outage", {"postcode": "1190"}),
            text("No outage at 1190."),
            text(f"No repair needed. {ESCALATE}: waive the late fee on INV-3310."),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    global s
    for s, request in each_handled(SCENARIOS, tracer):  # noqa: B007 (the global the tools record into)
        await run(request)


asyncio.run(main())
