"""A Strands Agents `Swarm` of energy-utility desks with Strands' own telemetry on the latest experimental GenAI
conventions (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental: system instructions, `gen_ai.input.messages` and
`gen_ai.output.messages` as attributes of `gen_ai.client.inference.operation.details` span events, tool calls as
message parts).

intake_desk (outage_status), tariff_desk (read_meter, switch_tariff, estimate_bill) and accounts_desk
(credit_overcharge, which fails, and delete_account), the tools of `energy.py`, share the swarm's own
`handoff_to_agent` tool, whose `agent_name` argument names the next desk; the desk that handed off gets the tool's
answer and ends its turn with one more model call, then the swarm runs the named desk. The OpenAI model provider
streams chat completions from the scripted model at OPENAI_BASE_URL. Each request is wrapped in a
`handle_request` span from a tracer of the same provider.

The ground truth is the request run of the swarm: the user's request, the last desk's answer, every desk's model
calls (counted by each agent's BeforeModelCallEvent hook) and tool calls (recorded by the tools as they ran), and
the handoffs, from the swarm's own handoff events, never as tool calls. In `tariff_failure` the model backend
fails during tariff_desk's turn: the swarm reports the request failed.
"""

import asyncio
import functools
import os
from collections import Counter
from collections.abc import Callable

os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
os.environ.setdefault("OTEL_SERVICE_NAME", "energy-desks")  # read by StrandsTelemetry's resource

from client import Scenario, each, failure, text, tool
from energy import FUNCTIONS
from hotel import call_recorded
from opentelemetry import trace
from strands import Agent
from strands import tool as strands_tool
from strands.models.openai import OpenAIModel
from strands.multiagent import Swarm
from strands.telemetry import StrandsTelemetry
from strands_swarm import counted, serve_swarm

telemetry = StrandsTelemetry().setup_otlp_exporter()  # OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
tracer = trace.get_tracer("energy-desks")
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()


def recorded(function: Callable[..., str]) -> object:
    """`function` of energy.py as a Strands tool (its signature and docstring) that records each execution."""

    @functools.wraps(function)
    def run(**arguments: object) -> str:
        return call_recorded(FUNCTIONS, s, function.__name__, arguments)

    return strands_tool(run)


TOOLS = {name: recorded(function) for name, function in FUNCTIONS.items()}


def desk(name: str, description: str, tools: list[str]) -> Agent:
    agent = Agent(
        name=name,
        description=description,
        model=OpenAIModel(
            client_args={"base_url": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]},
            model_id="gpt-4o-mini",
        ),
        system_prompt=f"You are the energy supplier's {name.replace('_', ' ')}. {description}",
        tools=[TOOLS[t] for t in tools],
        callback_handler=None,
    )
    return counted(agent, model_calls)


def swarm() -> Swarm:
    """A new swarm for each request: Strands agents keep their conversation across invocations."""
    intake = desk("intake_desk", "Answers outage questions and routes the rest.", ["outage_status"])
    tariffs = desk(
        "tariff_desk",
        "Reads meters, quotes bills and switches tariffs.",
        ["read_meter", "switch_tariff", "estimate_bill"],
    )
    accounts = desk(
        "accounts_desk", "Credits overcharges and closes accounts.", ["credit_overcharge", "delete_account"]
    )
    return Swarm([intake, tariffs, accounts], entry_point=intake)


def hand(to: str, message: str) -> dict:
    return tool("handoff_to_agent", {"agent_name": to, "message": message})


SCENARIOS = {
    "tariff_handoff": (
        "Read meter M-7 and put it on the green night plan.",
        [
            hand("tariff_desk", "The customer wants meter M-7 read and moved to the green night plan."),
            text("The tariff desk will take it from here."),
            tool("read_meter", {"meter_id": "M-7"}),
            tool("switch_tariff", {"meter_id": "M-7", "plan": "green-night"}),
            text("M-7 reads 4312 kWh; it moves to green-night on the 1st of next month."),
        ],
    ),
    "switch_then_credit": (
        "Move meter M-9 to the green night plan, and credit back the 64 euros you overcharged me.",
        [
            hand("tariff_desk", "Switch M-9 to green night; then a 64 EUR overcharge credit."),
            text("The tariff desk will take it from here."),
            tool("switch_tariff", {"meter_id": "M-9", "plan": "green-night"}),
            hand("accounts_desk", "M-9 is switched; the customer wants 64 EUR credited back."),
            text("M-9 is switched; the accounts desk will handle the credit."),
            tool("credit_overcharge", {"amount": 64}),
            text(
                "M-9 moves to green-night next month, but I could not credit the 64 EUR: the credit window has closed."
            ),
        ],
    ),
    "close_account": (
        "I am moving abroad; wipe my customer account e-512.",
        [
            hand("accounts_desk", "The customer wants account e-512 closed."),
            text("The accounts desk will take it from here."),
            tool("delete_account", {"user_id": "e-512"}),
            text("Customer account e-512 has been wiped."),
        ],
    ),
    "tariff_failure": (
        "What does meter M-9 read?",
        [
            hand("tariff_desk", "The customer asks for the reading of M-9."),
            text("The tariff desk will take it from here."),
            tool("read_meter", {"meter_id": "M-9"}),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):
        with tracer.start_as_current_span("handle_request"):
            await serve_swarm(s, swarm(), "intake_desk", request, model_calls)
        telemetry.tracer_provider.force_flush()


asyncio.run(main())
