"""An Agno `Team` in route mode (a router leader and two member agents with tools) traced by OpenLLMetry:
Traceloop's opentelemetry-instrumentation-agno for the team, agent and tool spans and its
opentelemetry-instrumentation-openai for the model calls.

`claims_router` hands each request to one member with the Team's own `delegate_task_to_member` tool
(`member_id` names the member); in route mode the member's reply is the answer and ends the run. Members:
`policy_desk` (lookup_policy, file_claim, delete_account) and `payout_desk` (check_payout_status,
issue_payout, which fails). The model is `OpenAIChat(base_url=...)` with the client's retries off, so one
model call is one request to the scripted model. Each request runs inside a `handle_request` span.

The ground truth is the request run: the user's request, the answer the Team returned, every agent's model
calls (the assistant messages of the leader's and the member's runs, plus the call that failed), the
member's tool calls as the tools really ran them, and the delegation as a handoff (leader -> `member_id`).
In `payout_desk_failure` the model backend fails inside the member's turn.

Run as ../agno-team-openlit/capture.py (INSTRUMENTATION="openlit"), the same requests are traced by OpenLIT
(`openlit.init`, its agno and OpenAI instrumentations) instead; `telemetry.py` sets up either.
"""

import os

os.environ.setdefault("AGNO_TELEMETRY", "false")  # no anonymous usage pings

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.team import Team
from agno.team.mode import TeamMode
from client import Scenario, each, failure, text, tool
from telemetry import flush, traced


def openllmetry() -> list:
    from opentelemetry.instrumentation.agno import AgnoInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return [AgnoInstrumentor(), OpenAIInstrumentor()]


tracer = traced("claims-service", None if globals().get("INSTRUMENTATION") == "openlit" else openllmetry)

S: Scenario  # the scenario being captured; the tools record into its request run


def lookup_policy(policy_id: str) -> str:
    """Look up an insurance policy by its id."""
    return S.ran("lookup_policy", {"policy_id": policy_id}, f"policy {policy_id}: home cover, active, excess 250 EUR")


def file_claim(policy_id: str, kind: str) -> str:
    """File a claim against a policy."""
    return S.ran("file_claim", {"policy_id": policy_id, "kind": kind}, f"claim C-5150 filed on {policy_id} ({kind})")


def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    return S.ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


def check_payout_status(claim_id: str) -> str:
    """Check the payout status of a claim."""
    return S.ran("check_payout_status", {"claim_id": claim_id}, f"claim {claim_id}: approved, payout pending")


def issue_payout(claim_id: str, amount: int) -> str:
    """Pay out an approved claim."""
    return S.ran("issue_payout", {"claim_id": claim_id, "amount": amount}, error="payout rail offline")


def model() -> OpenAIChat:
    return OpenAIChat(id="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)


def team() -> Team:
    policy = Agent(
        id="policy_desk",
        name="policy_desk",
        role="Looks up policies, files claims and closes accounts.",
        model=model(),
        tools=[lookup_policy, file_claim, delete_account],
        telemetry=False,
    )
    payout = Agent(
        id="payout_desk",
        name="payout_desk",
        role="Checks and issues claim payouts.",
        model=model(),
        tools=[check_payout_status, issue_payout],
        telemetry=False,
    )
    return Team(
        name="claims_router",
        mode=TeamMode.route,
        model=model(),
        members=[policy, payout],
        telemetry=False,
    )


def assistant_turns(messages: list | None) -> int:
    return sum(1 for m in messages or [] if m.role == "assistant")


def run(request: str) -> None:
    truth = S.run("claims_router", request)
    truth["handoffs"] = []
    router = team()
    result = router.run(request)
    calls = 0
    failed = result.status.value == "ERROR"
    for t in result.tools or []:
        if t.tool_name == "delegate_task_to_member":
            truth["handoffs"].append({"from": router.name, "to": t.tool_args["member_id"]})
    acting = [router.name]
    calls += assistant_turns(result.messages)
    for member in result.member_responses or []:
        acting.append(member.agent_name)
        calls += assistant_turns(member.messages)
        if member.status.value == "ERROR":
            failed = True
            calls += 1  # the model call that failed
    if failed and result.status.value == "ERROR" and not result.member_responses:
        calls += 1
    print(f"   team status {result.status.value}, members {acting[1:]}, content {result.content!r}")
    S.finish(None if failed else result.content, "error" if failed else "ok", calls)
    note = (
        "The request run is the Team's, with every agent's model and tool calls; agents that acted: "
        + ", ".join(acting)
        + ". The delegation is a handoff; each agent's own run is also reported, nested."
    )
    if failed:
        note += (
            f" The member's model call failed; the Team still reported {result.status.value} with the error "
            f"text {result.content!r} as its content, which is no answer: the request failed."
        )
    truth.update(nested_runs_allowed=True, note=note)


def delegate(member: str, task: str) -> dict:
    return tool("delegate_task_to_member", {"member_id": member, "task": task})


SCENARIOS = {
    "claim_filed": (
        "A pipe burst in my kitchen; please file a water-damage claim on policy P-311.",
        [
            delegate("policy_desk", "File a water-damage claim on policy P-311."),
            tool("lookup_policy", {"policy_id": "P-311"}),
            tool("file_claim", {"policy_id": "P-311", "kind": "water damage"}),
            text("Claim C-5150 is filed on policy P-311 for water damage; the excess is 250 EUR."),
        ],
    ),
    "payout_declined": (
        "Please pay out claim C-5150, 900 EUR.",
        [
            delegate("payout_desk", "Pay out claim C-5150, 900 EUR."),
            tool("issue_payout", {"claim_id": "C-5150", "amount": 900}),
            text("The payout for claim C-5150 could not be issued: the payout rail is offline."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            delegate("policy_desk", "Close the account of user 42."),
            tool("delete_account", {"user_id": "42"}),
            text("Account 42 has been closed."),
        ],
    ),
    "payout_desk_failure": (
        "Where is the payout for claim C-5150?",
        [
            delegate("payout_desk", "Report the payout status of claim C-5150."),
            tool("check_payout_status", {"claim_id": "C-5150"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run(request)
    flush()
