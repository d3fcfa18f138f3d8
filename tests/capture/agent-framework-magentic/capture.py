"""Microsoft Agent Framework's Magentic orchestration (`MagenticBuilder`): a manager agent plans, keeps a progress
ledger and gives the floor to one of two tool-using agents at a time, with the framework's own GenAI and workflow
spans (sensitive data on).

claims_adjuster (lookup_policy, file_claim) and indemnity_clerk (issue_payout, which fails, and delete_account)
are Agents on `OpenAIChatCompletionClient`; claims_conductor, the manager agent of the standard Magentic manager,
first asks the model for the facts it knows and a plan, then before every turn for its progress ledger (a JSON
object: whether the request is satisfied, the next speaker and its instruction), and once the ledger says the
request is satisfied for the final answer the user gets. Agent Framework instruments itself (on by default)
through the global OpenTelemetry providers, set here to SDK providers exporting OTLP/HTTP protobuf (traces, and
log records); message content is turned on the documented way, ENABLE_SENSITIVE_DATA=true. Each request is
wrapped in a `handle_request` span. Run as ../agent-framework-magentic-default/capture.py (DEFAULT_SETTINGS=True),
sensitive data stays off, and every run's ground truth lists in `lacks` what that trace cannot carry.

The ground truth is the request run of the orchestration, entered at the first agent the manager gives the floor
(as for AutoGen's Magentic-One): the user's request, the manager's final answer, every model call made for it (the
manager's and the agents', counted by a chat middleware on each agent), the tool calls (recorded by the tools) and
a handoff wherever the floor passes from one agent to the other (the manager's own instructions are not handoffs).
In `indemnity_failure` the model backend fails during indemnity_clerk's turn, the second agent's.
"""

import asyncio
import os

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # the -default source: sensitive data stays off
if not DEFAULT_SETTINGS:
    os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from agent_framework import Agent, chat_middleware  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from agent_framework_orchestrations import MagenticBuilder  # noqa: E402
from claims import desk_tools  # noqa: E402
from client import Scenario, failure, text, tool  # noqa: E402
from magentic import ledger, planned, record_turns  # noqa: E402
from telemetry import each_handled, exported  # noqa: E402

tracer = exported("claims-magentic")  # Agent Framework traces (and logs) to the global providers

s: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = desk_tools(lambda: s)
MANAGER = "claims_conductor"
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry
acted: list[str] = []  # the owner of each model call of the request in progress, counted by its middleware


def counted(agent_name: str):
    @chat_middleware
    async def count(context, call_next):
        acted.append(agent_name)
        await call_next()

    return count


def make_agent(name: str, instructions: str, tools: tuple[str, ...] = ()) -> Agent:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])
    return Agent(
        client,
        instructions,
        name=name,
        description=instructions,
        tools=[TOOLS[t] for t in tools],
        middleware=[counted(name)],
    )


def workflow():
    participants = [
        make_agent("claims_adjuster", "You read policies and file claims.", ("lookup_policy", "file_claim")),
        make_agent("indemnity_clerk", "You pay out claims and close accounts.", ("issue_payout", "delete_account")),
    ]
    manager = make_agent(MANAGER, "You coordinate the claims team and answer the customer.")
    return MagenticBuilder(participants=participants, manager_agent=manager, max_round_count=6).build()


def answer_of(outputs: list) -> str | None:
    """The orchestration's answer: the text of its last output."""
    last = outputs[-1] if outputs else None
    messages = getattr(last, "messages", None) or (last if isinstance(last, list) else [last])
    texts = [m.text for m in messages if getattr(m, "text", None)]
    return texts[-1] if texts else None


async def run(request: str) -> None:
    truth = s.run(FIRST[s.name], request)
    acted.clear()
    try:
        events = await workflow().run(request)
        output = answer_of(events.get_outputs())
        status = "ok" if output is not None else "error"
        print(f"   state {events.get_final_state()}; answer {output!r:.80}")
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:200]}")
        output, status = None, "error"
    s.finish(output, status, len(acted), lacks=LACKS if DEFAULT_SETTINGS else None)
    record_turns(truth, acted, MANAGER, "the Magentic orchestration's", "manager's")


FIRST = {  # the agent the manager gives the floor first
    "claim_filed": "claims_adjuster",
    "payout_error": "claims_adjuster",
    "close_account": "indemnity_clerk",
    "indemnity_failure": "claims_adjuster",
}
SCENARIOS = {
    "claim_filed": (
        "My camera was stolen on holiday; policy P-310. File a claim for 650 euros.",
        planned(
            [
                ledger("claims_adjuster", "Check policy P-310 and file a 650 EUR claim on it."),
                tool("lookup_policy", {"policy_id": "P-310"}),
                tool("file_claim", {"policy_id": "P-310", "amount": 650}),
                text("P-310 is active; claim CL-4471 is filed for 650 EUR."),
            ],
            "Your claim CL-4471 for 650 EUR is filed on policy P-310.",
            "claims_adjuster",
        ),
    ),
    "payout_error": (
        "File a 650 euro claim on policy P-310 and pay it out today.",
        planned(
            [
                ledger("claims_adjuster", "File a 650 EUR claim on P-310."),
                tool("file_claim", {"policy_id": "P-310", "amount": 650}),
                text("Claim CL-4471 is filed on P-310 for 650 EUR."),
                ledger("indemnity_clerk", "Pay out claim CL-4471."),
                tool("issue_payout", {"claim_id": "CL-4471"}),
                text("The payout of CL-4471 failed: the payout system is locked for audit."),
            ],
            "Claim CL-4471 is filed, but its payout failed: the payout system is locked for audit.",
            "claims_adjuster",
        ),
    ),
    "close_account": (
        "Please delete my insurance account, customer u-6620.",
        planned(
            [
                ledger("indemnity_clerk", "Close the account of customer u-6620."),
                tool("delete_account", {"user_id": "u-6620"}),
                text("Account u-6620 is deleted."),
            ],
            "Your insurance account u-6620 has been deleted.",
            "claims_adjuster",
        ),
    ),
    "indemnity_failure": (
        "Check policy P-310, then pay out claim CL-4471.",
        planned(
            [
                ledger("claims_adjuster", "Check policy P-310."),
                tool("lookup_policy", {"policy_id": "P-310"}),
                text("P-310 is active, home contents up to 5000 EUR."),
                ledger("indemnity_clerk", "Pay out claim CL-4471."),
                failure(503, "model backend overloaded"),
            ],
            None,
            "claims_adjuster",
        ),
    ),
}


async def main() -> None:
    global s
    for s, request in each_handled(SCENARIOS, tracer):  # noqa: B007 (the global the tools record into)
        await run(request)


asyncio.run(main())
