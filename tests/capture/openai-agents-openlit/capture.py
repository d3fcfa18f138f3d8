"""An OpenAI Agents SDK claims desk with handoffs and an agent called as a tool, traced by OpenLIT (`openlit.init`).

Agents (all on the scripted model through chat completions): front_counter, the entry, hands customers over with
custom-named handoffs (`refer_to_adjuster` to loss_adjuster, `hand_off_closures` to closures_desk) and asks
ledger_clerk through its tool form `query_ledger_clerk`; loss_adjuster looks up policies, files claims and pays out
(`issue_payout` fails); closures_desk closes accounts; ledger_clerk reads claim statuses. OpenLIT instruments
both the Agents SDK (its tracing processor replaces the SDK's own, so nothing is sent elsewhere) and the
OpenAI client, with message content on.
Each scenario is one request (`Runner.run`) wrapped in a `handle_request` span, as a web service would.

The ground truth comes from the SDK's own RunHooks (passed to the runner and to the agent tool's nested run) and
from what the tools receive and return, never from the spans: the request run holds every agent's model calls
and the non-handoff tool calls in the order they started; an agent called as a tool is one call of the request
whose inner agent's calls follow it; handoffs are listed as handoffs. In `claims_failure` the model backend fails
during loss_adjuster's turn and the runner raises.
"""

import asyncio
import os

import openlit
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    function_tool,
    handoff,
)
from agents_hooks import Hooks
from client import Scenario, failure, text, tool
from insurance import REQUESTS, run_recorded
from openai import AsyncOpenAI
from opentelemetry import trace

SERVICE = "claims-desk"
openlit.init(
    otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
    application_name=SERVICE,
    service_name=SERVICE,
    disable_batch=True,
    disable_metrics=True,  # the harness records traces and logs only
    disabled_instrumentors=["urllib"],  # the harness's own control calls, not the service's
    capture_message_content=True,
)
tracer = trace.get_tracer(SERVICE)
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI(max_retries=0))
s: Scenario  # the scenario being captured; the tools record into its request run
AGENT_TOOL = "query_ledger_clerk"  # ledger_clerk called as a tool


@function_tool
def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return run_recorded(s, "lookup_policy", {"policy_id": policy_id})


@function_tool
def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


@function_tool
def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    return run_recorded(s, "issue_payout", {"amount": amount})


@function_tool
def claim_status(claim_id: str) -> str:
    """Where a claim stands."""
    return run_recorded(s, "claim_status", {"claim_id": claim_id})


@function_tool
def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(s, "delete_account", {"user_id": user_id})


def desk(hooks: Hooks) -> Agent:
    """The entry agent of one request, its handoff targets and its agent tool reporting to `hooks`."""
    claims = Agent(
        name="loss_adjuster",
        instructions="You look up policies, file claims and pay them out.",
        model=model,
        tools=[lookup_policy, file_claim, issue_payout],
    )
    accounts = Agent(name="closures_desk", instructions="You close accounts.", model=model, tools=[delete_account])
    auditor = Agent(
        name="ledger_clerk", instructions="You check where claims stand.", model=model, tools=[claim_status]
    )
    return Agent(
        name="front_counter",
        instructions="You greet insurance customers and route them.",
        model=model,
        handoffs=[
            handoff(claims, tool_name_override="refer_to_adjuster"),
            handoff(accounts, tool_name_override="hand_off_closures"),
        ],
        tools=[
            auditor.as_tool(
                tool_name=AGENT_TOOL, tool_description="Ask the ledger clerk where claims stand.", hooks=hooks
            )
        ],
    )


async def run(request: str) -> None:
    request_run = s.run("front_counter", request)
    request_run["handoffs"] = []
    hooks = Hooks(request_run, AGENT_TOOL)
    try:
        result = await Runner.run(desk(hooks), request, hooks=hooks)
        output, status = result.final_output, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(hooks.calls.values()))
    request_run.update(nested_runs_allowed=True, note=hooks.note("front_counter"))


TO_CLAIMS = tool("refer_to_adjuster", {})
SCENARIOS = {
    "claim_handoff": (
        REQUESTS["happy"][0][0],
        [TO_CLAIMS, *REQUESTS["happy"][1]],
    ),
    "ledger_clerk_tool": (
        "How are claims C-1 and C-2 doing?",
        [
            tool(AGENT_TOOL, {"input": "Status of claims C-1 and C-2"}),
            tool("claim_status", {"claim_id": "C-1"}),
            tool("claim_status", {"claim_id": "C-2"}),
            text("C-1 is under review; C-2 was paid on 3 March."),
            text("Claim C-1 is under review and C-2 was paid on 3 March."),
        ],
    ),
    "payout_error": (
        REQUESTS["tool_error"][0][0],
        [TO_CLAIMS, *REQUESTS["tool_error"][1]],
    ),
    "close_account": (
        REQUESTS["forbidden"][0][0],
        [tool("hand_off_closures", {}), *REQUESTS["forbidden"][1]],
    ),
    "claims_failure": (
        REQUESTS["agent_error"][0][0],
        [TO_CLAIMS, tool("lookup_policy", {"policy_id": "PX-2"}), failure(503, "model backend overloaded")],
    ),
}


async def main() -> None:
    global s
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(request)
            trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]


asyncio.run(main())
