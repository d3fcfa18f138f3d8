"""A Semantic Kernel `MagenticOrchestration`: the standard Magentic manager plans, keeps a progress ledger and gives
the floor to one of two ChatCompletionAgents with plugins at a time, with SK's own GenAI diagnostics (sensitive
content on).

coverage_analyst (plugin `Coverage`: lookup_policy, file_claim) and disbursement_officer (plugin `Disbursement`:
issue_payout, which fails, delete_account) run in an `InProcessRuntime`; the `StandardMagenticManager`, on a chat
service of its own, first asks the model for the facts and a plan, then before every turn for its progress ledger
(structured output: whether the request is satisfied, the next speaker and its instruction), and once the ledger
says the request is satisfied for the final answer, the orchestration's result. Tools reach the model as
`<Plugin>-<function>`. SK reads its switches at import: SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS
and ..._SENSITIVE; chat content is written as Python log records, sent here through an OTLP LoggerProvider. Each
request is wrapped in a `handle_request` span. Run as ../semantic-kernel-magentic-default/capture.py
(DEFAULT_SETTINGS=True), only the non-sensitive switch is on and every run's ground truth lists in `lacks` what the
spans then cannot carry.

The ground truth is the request run of the orchestration, entered at the first agent the manager gives the floor
(as for the other Magentic captures): the user's request, the manager's final answer, every model call made for it
(the manager's and the agents', counted at each one's HTTP client), the tool calls as the model named them
(recorded by the functions) and a handoff wherever the floor passes from one agent to the other (the manager's own
instructions are not handoffs). In `officer_failure` the model backend fails during disbursement_officer's turn,
the second agent's.
"""

import asyncio
import os

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # the -default source: the sensitive switch stays off
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = str(not DEFAULT_SETTINGS).lower()

from claims import desk_tools  # noqa: E402
from client import Scenario, failure, text, tool  # noqa: E402
from magentic import ledger, planned, record_turns  # noqa: E402
from model_calls import counting_http  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent, MagenticOrchestration, StandardMagenticManager  # noqa: E402
from semantic_kernel.connectors.ai import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.functions import KernelPlugin, kernel_function  # noqa: E402
from sk_orchestration import invoke, qualified, qualified_replies  # noqa: E402
from telemetry import each_handled, exported  # noqa: E402

tracer = exported("claims-magentic-desk", content_logger="semantic_kernel")  # SK's GenAI content events

s: Scenario  # the scenario being captured; the functions record into its request run
TOOLS = desk_tools(lambda: s)
COVERAGE, DISBURSEMENT = ("lookup_policy", "file_claim"), ("issue_payout", "delete_account")
PLUGIN = {**dict.fromkeys(COVERAGE, "Coverage"), **dict.fromkeys(DISBURSEMENT, "Disbursement")}
MANAGER = "magentic_manager"
acted: list[str] = []  # who made each model call of the request in progress (MANAGER for the manager's own)
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what spans without content lack


def service(owner: str) -> OpenAIChatCompletion:
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=counting_http(owner, acted))
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


def agent(name: str, description: str, plugin: str, functions: tuple[str, ...]) -> ChatCompletionAgent:
    return ChatCompletionAgent(
        service=service(name),
        name=name,
        description=description,
        instructions=f"You are the insurer's {name.replace('_', ' ')}. {description}",
        plugins=[KernelPlugin(name=plugin, functions=[kernel_function(TOOLS[f]) for f in functions])],
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10),
    )


def orchestration() -> MagenticOrchestration:
    members = [
        agent("coverage_analyst", "Reads insurance policies and files claims.", "Coverage", COVERAGE),
        agent("disbursement_officer", "Pays out claims and closes customer accounts.", "Disbursement", DISBURSEMENT),
    ]
    return MagenticOrchestration(
        members=members, manager=StandardMagenticManager(chat_completion_service=service(MANAGER))
    )


async def run(request: str) -> None:
    truth = s.run(FIRST[s.name], request)
    acted.clear()
    output, status = await invoke(orchestration(), request)
    qualified(truth["tool_calls"], PLUGIN)
    s.finish(output, status, len(acted), lacks=LACKS if DEFAULT_SETTINGS else None)
    record_turns(truth, acted, MANAGER, "the Magentic orchestration's", "standard Magentic manager's")


FIRST = {  # the agent the manager gives the floor first
    "claim_filed": "coverage_analyst",
    "payout_error": "coverage_analyst",
    "close_account": "disbursement_officer",
    "officer_failure": "coverage_analyst",
}
SCENARIOS = {
    "claim_filed": (
        "Hail broke my greenhouse; policy P-522. File a claim for 780 euros.",
        planned(
            [
                ledger("coverage_analyst", "Check policy P-522 and file a 780 EUR claim on it."),
                tool("lookup_policy", {"policy_id": "P-522"}),
                tool("file_claim", {"policy_id": "P-522", "amount": 780}),
                text("P-522 is active; claim CL-4471 is filed for 780 EUR."),
            ],
            "Your claim CL-4471 for 780 EUR is filed on policy P-522.",
            "coverage_analyst",
        ),
    ),
    "payout_error": (
        "File a 780 euro claim on policy P-522 and pay it out right away.",
        planned(
            [
                ledger("coverage_analyst", "File a 780 EUR claim on P-522."),
                tool("file_claim", {"policy_id": "P-522", "amount": 780}),
                text("Claim CL-4471 is filed on P-522 for 780 EUR."),
                ledger("disbursement_officer", "Pay out claim CL-4471."),
                tool("issue_payout", {"claim_id": "CL-4471"}),
                text("The payout of CL-4471 failed: the payout system is locked for audit."),
            ],
            "Claim CL-4471 is filed, but its payout failed: the payout system is locked for audit.",
            "coverage_analyst",
        ),
    ),
    "close_account": (
        "I have sold the house; delete my insurance account, customer u-7341.",
        planned(
            [
                ledger("disbursement_officer", "Close the account of customer u-7341."),
                tool("delete_account", {"user_id": "u-7341"}),
                text("Account u-7341 is deleted."),
            ],
            "Your insurance account u-7341 has been deleted.",
            "coverage_analyst",
        ),
    ),
    "officer_failure": (
        "Check policy P-522, then pay out claim CL-4471.",
        planned(
            [
                ledger("coverage_analyst", "Check policy P-522."),
                tool("lookup_policy", {"policy_id": "P-522"}),
                text("P-522 is active, home contents up to 5000 EUR."),
                ledger("disbursement_officer", "Pay out claim CL-4471."),
                failure(503, "model backend overloaded"),
            ],
            None,
            "coverage_analyst",
        ),
    ),
}
qualified_replies(SCENARIOS, PLUGIN)  # the scripted calls under the names SK gives the model


async def main() -> None:
    global s
    for s, request in each_handled(SCENARIOS, tracer):  # noqa: B007 (the global the functions record into)
        await run(request)


asyncio.run(main())
