"""A Google ADK `SequentialAgent` of two LlmAgents, the second able to transfer to a third (`sub_agents`), traced by
OpenLIT (`openlit.init`: its Google ADK, LiteLLM and OpenAI instrumentations, message content on by default).
OpenLIT sets the global TracerProvider, so ADK's own spans (its default schema) are exported beside OpenLIT's, as
a user of `openlit.init` gets them.

`energy_pipeline` runs `meter_clerk` (read_meter, outage_status), then `tariff_desk` (switch_tariff,
estimate_bill), whose sub-agent `retention_officer` (credit_overcharge, which fails, and delete_account) it can
transfer the customer to with ADK's transfer tool; retention_officer then acts and answers in the same
invocation. The energy tools of `../energy.py`; the agents use LiteLlm('openai/gpt-4o-mini') against the scripted
model, and a raising tool answers the model `{"error": ...}` (`on_tool_error_callback`). Each request runs inside
a `handle_request` span.

The ground truth is one request run per request, entered at the workflow agent: every agent's model calls
(before_model_callback), the tool calls as they ran, the transfer as a handoff (not a tool call; the move from the
first step to the second is the workflow's, no handoff) and the answer the user got last. In `desk_failure` the
model backend fails inside tariff_desk's turn, the second step.
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web

import energy
from adk_runner import counting_agent, workflow_request
from client import Scenario, each, failure, text, tool
from google.adk.agents import LlmAgent, SequentialAgent
from hotel import recorded_tools
from telemetry import flush, traced

tracer = traced("energy-pipeline")

S: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = recorded_tools(energy.FUNCTIONS, lambda: S)
CALLS: dict[str, int] = {}  # model calls per agent in the current request


def transferred(tool, args, tool_context, tool_response):
    """ADK's transfer tool as it ran: a handoff of the request, not one of its tool calls."""
    if tool.name == "transfer_to_agent":
        S.runs[-1]["handoffs"].append({"from": tool_context.agent_name, "to": args["agent_name"]})


def agent(name: str, instruction: str, tools: list[str], **extra) -> LlmAgent:
    chosen = [TOOLS[t] for t in tools]
    return counting_agent(name, instruction, chosen, CALLS, after_tool_callback=transferred, **extra)


def pipeline() -> SequentialAgent:
    retention = agent(
        "retention_officer",
        "You credit overcharges and close customer accounts.",
        ["credit_overcharge", "delete_account"],
        description="Credits overcharges and closes customer accounts.",
    )
    return SequentialAgent(
        name="energy_pipeline",
        description="Gathers the meter facts, then acts on the request.",
        sub_agents=[
            agent(
                "meter_clerk",
                "You gather the meter and outage facts the request needs.",
                ["read_meter", "outage_status"],
            ),
            agent(
                "tariff_desk",
                "You switch tariffs and estimate bills; send credits and account closures to retention_officer.",
                ["switch_tariff", "estimate_bill"],
                sub_agents=[retention],
            ),
        ],
    )


def transfer() -> dict:
    return tool("transfer_to_agent", {"agent_name": "retention_officer"})


SCENARIOS = {
    "tariff_switched": (
        "Move my meter M-9 to the green-night tariff, after reading it.",
        [
            tool("read_meter", {"meter_id": "M-9"}),
            text("M-9 last read 881 kWh (30 October)."),
            tool("switch_tariff", {"meter_id": "M-9", "plan": "green-night"}),
            text("Done: M-9 (881 kWh on 30 October) switches to green-night from the 1st of next month."),
        ],
    ),
    "credit_refused": (
        "Meter M-7 was billed 38 euros too much last month; put the money back on my account.",
        [
            tool("read_meter", {"meter_id": "M-7"}),
            text("M-7 last read 4312 kWh (1 November)."),
            transfer(),
            tool("credit_overcharge", {"amount": 38}),
            text("The 38 EUR could not be credited: the credit window for that bill has closed."),
        ],
    ),
    "account_wiped": (
        "Is there an outage in 8020? Either way, close customer account e-733, I am leaving.",
        [
            tool("outage_status", {"postcode": "8020"}),
            text("8020 has an outage since 06:40, fix expected at 13:00."),
            transfer(),
            tool("delete_account", {"user_id": "e-733"}),
            text("8020's outage should be fixed by 13:00; customer account e-733 is closed."),
        ],
    ),
    "desk_failure": (
        "Read M-7 and estimate my monthly bill from it.",
        [
            tool("read_meter", {"meter_id": "M-7"}),
            text("M-7 last read 4312 kWh (1 November)."),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    global S
    for S, request in each(SCENARIOS, nested_runs_allowed=True):
        with tracer.start_as_current_span("handle_request"):
            await workflow_request(S, pipeline(), request, "energy", CALLS)
        flush()


asyncio.run(main())
