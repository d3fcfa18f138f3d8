"""A Semantic Kernel `GroupChatOrchestration` of two ChatCompletionAgents with plugins, taking turns under a
`RoundRobinGroupChatManager`, with SK's own GenAI diagnostics (sensitive content on).

metering_desk (plugin `Metering`: read_meter, book_technician) and accounts_desk (plugin `Accounts`:
waive_late_fee, which fails, tariff_quote, delete_account) run in an `InProcessRuntime`; the manager gives the
floor to metering_desk, then to accounts_desk (`max_rounds=2`), and the chat's result is its last message.
Tools reach the model as `<Plugin>-<function>`. The agents stream chat completions from an AsyncOpenAI client at
OPENAI_BASE_URL. SK reads its switches at import: SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE);
chat content is written as Python log records, sent here through an OTLP LoggerProvider. Each request is wrapped
in a `handle_request` span. Run as ../semantic-kernel-groupchat-default/capture.py (DEFAULT_SETTINGS=True), only
the non-sensitive switch is on and every run's ground truth lists in `lacks` what the spans then cannot carry.

The ground truth is the request run of the group chat, entered at metering_desk: the user's request, the last
agent's answer (the chat's result), every agent's model calls (counted at each agent's HTTP client, a retry not
counted again), the tool calls as the model named them (recorded by the functions), and a handoff wherever the
floor passes from one agent to the other (as for the other group chats). In `accounts_failure` the model backend
fails during accounts_desk's turn and the orchestration's result raises.
"""

import asyncio
import os
from itertools import pairwise

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # the -default source: the sensitive switch stays off
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = str(not DEFAULT_SETTINGS).lower()

from client import Scenario, each, failure, text, tool  # noqa: E402
from model_calls import counting_http  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent, GroupChatOrchestration, RoundRobinGroupChatManager  # noqa: E402
from semantic_kernel.connectors.ai import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.functions import KernelPlugin, kernel_function  # noqa: E402
from sk_orchestration import invoke, qualified  # noqa: E402
from telemetry import exported, flush  # noqa: E402
from utility_desk import ACCOUNTS, METERING, desk_tools  # noqa: E402

tracer = exported("power-roundtable", content_logger="semantic_kernel")  # SK's GenAI content events

s: Scenario  # the scenario being captured; the functions record into its request run
TOOLS = desk_tools(lambda: s)
PLUGIN = {**dict.fromkeys(METERING, "Metering"), **dict.fromkeys(ACCOUNTS, "Accounts")}
acted: list[str] = []  # the agent behind each model call of the request in progress
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what spans without content lack


def service(owner: str) -> OpenAIChatCompletion:
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=counting_http(owner, acted))
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


def plugin(name: str, functions: tuple[str, ...]) -> KernelPlugin:
    return KernelPlugin(name=name, functions=[kernel_function(TOOLS[f]) for f in functions])


def agent(name: str, description: str, plugins: list[KernelPlugin]) -> ChatCompletionAgent:
    return ChatCompletionAgent(
        service=service(name),
        name=name,
        description=description,
        instructions=f"You are the power company's {name.replace('_', ' ')}. {description}",
        plugins=plugins,
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10),
    )


def orchestration() -> GroupChatOrchestration:
    members = [
        agent("metering_desk", "Reads electricity meters and books technician visits.", [plugin("Metering", METERING)]),
        agent("accounts_desk", "Waives fees, quotes tariffs, closes accounts.", [plugin("Accounts", ACCOUNTS)]),
    ]
    return GroupChatOrchestration(members=members, manager=RoundRobinGroupChatManager(max_rounds=2))


async def run(request: str) -> None:
    truth = s.run("metering_desk", request)
    acted.clear()
    output, status = await invoke(orchestration(), request)
    qualified(truth["tool_calls"], PLUGIN)
    s.finish(output, status, len(acted), lacks=LACKS if DEFAULT_SETTINGS else None)
    truth.update(
        handoffs=[{"from": a, "to": b} for a, b in pairwise(acted) if a != b],
        nested_runs_allowed=True,
        note="The request run is the round-robin group chat's, with every agent's model and tool calls; the "
        f"manager makes no model call; model calls, by whom: {acted}.",
    )


SCENARIOS = {
    "meter_and_tariff": (
        "Read my meter M-88, book a technician for Tuesday, and quote the green tariff for 340 kWh a month.",
        [
            tool("read_meter", {"meter_id": "M-88"}),
            tool("book_technician", {"meter_id": "M-88", "day": "Tuesday"}),
            text("M-88 reads 4120 kWh; a technician comes on Tuesday (job JT-301)."),
            tool("tariff_quote", {"kwh": 340}),
            text("Technician booked for Tuesday (JT-301); 340 kWh a month costs 71 EUR on the green tariff."),
        ],
    ),
    "fee_waiver_error": (
        "Waive the late fee on invoice INV-2207, please.",
        [
            text("Fees are for the accounts desk; nothing to read on the meter side."),
            tool("waive_late_fee", {"invoice_id": "INV-2207"}),
            text("Sorry, the late fee on INV-2207 could not be waived: the fee ledger is closed for month-end."),
        ],
    ),
    "close_account": (
        "Close my power account, customer c-5521.",
        [
            text("Account closures are for the accounts desk."),
            tool("delete_account", {"user_id": "c-5521"}),
            text("Your power account c-5521 has been closed."),
        ],
    ),
    "accounts_failure": (
        "Read meter M-88 and quote me the green tariff for that use.",
        [
            tool("read_meter", {"meter_id": "M-88"}),
            text("M-88 reads 4120 kWh."),
            failure(503, "model backend overloaded"),
        ],
    ),
}


for _request, replies in SCENARIOS.values():  # the scripted calls under the names SK gives the model
    for reply in replies:
        qualified(reply.get("tool_calls", []), PLUGIN)


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (the global the functions record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        flush()


asyncio.run(main())
