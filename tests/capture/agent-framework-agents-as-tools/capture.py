"""Microsoft Agent Framework agents as tools (`Agent.as_tool()`): a coordinator whose tools are two other agents,
with the framework's own GenAI spans.

energy_concierge has `consult_meter_analyst` (meter_analyst: read_meter, estimate_bill), `ask_tariff_clerk`
(tariff_clerk: switch_tariff, credit_overcharge, which fails) and delete_account; the two agent tools are the
agents' `as_tool(name=..., arg_name="task")`, run by the framework's function invocation. The energy tools of
`energy.py` record what they received and returned. Agent Framework instruments itself (on by default) through
the global OpenTelemetry providers, set here to SDK providers exporting OTLP/HTTP protobuf (traces, and log
records); message content is turned on the documented way, ENABLE_SENSITIVE_DATA=true. Each request is wrapped
in a `handle_request` span. Run as ../agent-framework-agents-as-tools-default/capture.py (DEFAULT_SETTINGS=True),
sensitive data stays off, and every run's ground truth lists in `lacks` what that trace cannot carry.

The ground truth is one request run per user request, entered at energy_concierge: every agent's model calls
(counted by a chat middleware on each agent), the tool calls in the order they started (an agent tool, recorded
by a function middleware on the coordinator with the task the model gave it and the agent's answer, then that
agent's own calls), no handoff, and the coordinator's answer. In `analyst_down` the model backend fails during
the meter analyst's turn: the agent tool fails, and so does the coordinator's next model call.
"""

import asyncio
import os
from typing import Any

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
if not DEFAULT_SETTINGS:
    os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from af_agents import counted_agent  # noqa: E402
from agent_framework import Agent, function_middleware  # noqa: E402
from claims import each_request  # noqa: E402
from client import Scenario, failure, text, tool  # noqa: E402
from energy import FUNCTIONS  # noqa: E402
from hotel import call_recorded  # noqa: E402
from request_run import agents_as_tools_run  # noqa: E402
from telemetry import exported, flush  # noqa: E402

tracer = exported("energy-concierge")
s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls each agent made, counted by its chat middleware (af_agents)
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry
AGENT_TOOLS = ("consult_meter_analyst", "ask_tariff_clerk")


def read_meter(meter_id: str) -> str:
    """The latest reading of an electricity meter."""
    return call_recorded(FUNCTIONS, s, "read_meter", {"meter_id": meter_id})


def estimate_bill(kwh: int) -> str:
    """The monthly bill for a consumption in kWh."""
    return call_recorded(FUNCTIONS, s, "estimate_bill", {"kwh": kwh})


def switch_tariff(meter_id: str, plan: str) -> str:
    """Move a meter to another tariff plan."""
    return call_recorded(FUNCTIONS, s, "switch_tariff", {"meter_id": meter_id, "plan": plan})


def credit_overcharge(amount: int) -> str:
    """Credit an overcharged amount back to the customer's account."""
    return call_recorded(FUNCTIONS, s, "credit_overcharge", {"amount": amount})


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return call_recorded(FUNCTIONS, s, "delete_account", {"user_id": user_id})


@function_middleware
async def agent_tool_truth(context, call_next):
    """An agent tool enters the ground truth when it starts (before the agent's own calls), its answer when it
    ends; a failure leaves it failed."""
    if context.function.name not in AGENT_TOOLS:
        await call_next()
        return
    entry: dict[str, Any] = {
        "name": context.function.name,
        "arguments": dict(context.arguments),
        "result": None,
        "error": True,
    }
    s.runs[-1]["tool_calls"].append(entry)
    await call_next()  # a failure raises here and leaves the entry failed
    result = context.result  # the agent's answer: its text, a response or a list of contents
    answer = getattr(result, "text", result)
    if not isinstance(answer, str):
        answer = "".join(getattr(c, "text", None) or "" for c in answer or [])
    entry.update(result=answer.strip(), error=False)


def coordinator() -> Agent:
    """A new coordinator (and agents) for each request, so no conversation carries over."""
    analyst = counted_agent(
        "meter_analyst", "You read electricity meters and estimate bills.", [read_meter, estimate_bill], CALLS
    )
    clerk = counted_agent(
        "tariff_clerk", "You switch tariffs and credit overcharges.", [switch_tariff, credit_overcharge], CALLS
    )
    return counted_agent(
        "energy_concierge",
        "You help energy customers; consult the meter analyst and the tariff clerk.",
        [
            analyst.as_tool(name="consult_meter_analyst", arg_name="task", description="Meter readings and bills."),
            clerk.as_tool(name="ask_tariff_clerk", arg_name="task", description="Tariff changes and credits."),
            delete_account,
        ],
        CALLS,
        [agent_tool_truth],
    )


async def run(request: str) -> None:
    with agents_as_tools_run(s, "energy_concierge", request, CALLS, LACKS if DEFAULT_SETTINGS else None) as answer:
        answer["output"] = (await coordinator().run(request)).text


SCENARIOS = {
    "meter_consulted": (
        ["How much will I pay a month on meter M-7?"],
        [
            tool("consult_meter_analyst", {"task": "Estimate the monthly bill for meter M-7."}),
            tool("read_meter", {"meter_id": "M-7"}),
            tool("estimate_bill", {"kwh": 360}),
            text("Meter M-7 reads 4312 kWh; at 360 kWh a month the bill is about 112 EUR."),
            text("On meter M-7 you will pay about 112 EUR a month."),
        ],
    ),
    "credit_refused": (
        ["Switch M-9 to the green-night plan and credit back the 30 euros you overcharged."],
        [
            tool("ask_tariff_clerk", {"task": "Move M-9 to green-night and credit 30 EUR."}),
            tool("switch_tariff", {"meter_id": "M-9", "plan": "green-night"}),
            tool("credit_overcharge", {"amount": 30}),
            text("M-9 moves to green-night next month; the 30 EUR credit failed: the credit window has closed."),
            text("M-9 moves to the green-night plan next month, but the 30 EUR credit could not be made."),
        ],
    ),
    "close_account": (
        ["I'm leaving; delete my energy account, customer u-7731."],
        [tool("delete_account", {"user_id": "u-7731"}), text("Your energy account u-7731 has been deleted.")],
    ),
    "analyst_down": (
        ["Read meter M-9 for me."],
        [
            tool("consult_meter_analyst", {"task": "Read meter M-9."}),
            tool("read_meter", {"meter_id": "M-9"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        flush()


asyncio.run(main())
