"""Strands Agents "agents as tools": a coordinator Agent whose tools are functions that call other Agents, with
Strands' own telemetry (StrandsTelemetry + OTLP/HTTP exporter).

claims_coordinator has `consult_auditor` (runs the fraud_auditor agent, which has appraise_damage),
`ask_claims_specialist` (runs the claims_specialist agent, which has lookup_policy, file_claim and
issue_payout, which fails) and delete_account. Each agent tool builds its agent, invokes it with the
coordinator's question and returns its answer as the tool's result. The OpenAI model provider streams chat
completions from the scripted model at OPENAI_BASE_URL. Message content is on by default (span events). Each
request is wrapped in a `handle_request` span from a tracer of the same provider.

The ground truth is one request run per user request, entered at claims_coordinator: every agent's model
calls (counted by each agent's BeforeModelCallEvent hook), the tool calls in the order they started (an
agent tool with the question it got and the agent's answer, then that agent's own calls), no handoff, and
the coordinator's answer. In `specialist_failure` the model backend fails during the specialist's turn: the
agent tool fails, and so does the coordinator's next model call.
"""

import asyncio
import os
from collections import Counter
from typing import Any

from claims import each_request, run_recorded
from client import Scenario, failure, text, tool
from opentelemetry import trace
from strands import Agent
from strands import tool as strands_tool
from strands.hooks import BeforeModelCallEvent
from strands.models.openai import OpenAIModel
from strands.telemetry import StrandsTelemetry

os.environ.setdefault("OTEL_SERVICE_NAME", "claims-coordinator")  # read by StrandsTelemetry's resource
telemetry = StrandsTelemetry().setup_otlp_exporter()  # OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
tracer = trace.get_tracer("claims-coordinator")
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()


@strands_tool
async def lookup_policy(policy_id: str) -> str:
    """Look up an insurance policy by id."""
    return run_recorded(s, "lookup_policy", {"policy_id": policy_id})


@strands_tool
async def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


@strands_tool
async def issue_payout(claim_id: str) -> str:
    """Pay out an approved claim."""
    return run_recorded(s, "issue_payout", {"claim_id": claim_id})


@strands_tool
async def appraise_damage(item: str) -> str:
    """Appraise the value of a damaged item."""
    return run_recorded(s, "appraise_damage", {"item": item})


@strands_tool
async def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(s, "delete_account", {"user_id": user_id})


def make_agent(name: str, prompt: str, agent_tools: list) -> Agent:
    client_args = {"base_url": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]}
    agent = Agent(
        name=name,
        model=OpenAIModel(client_args=client_args, model_id="gpt-4o-mini"),
        system_prompt=prompt,
        tools=agent_tools,
        callback_handler=None,
    )

    def count(event: BeforeModelCallEvent) -> None:  # the agent's own hook, not the spans
        model_calls[name] += 1

    agent.hooks.add_callback(BeforeModelCallEvent, count)
    return agent


async def call_agent(tool_name: str, agent: Agent, question: str) -> str:
    """Run an agent as a tool: the call enters the ground truth when it starts, its answer when it ends."""
    entry: dict[str, Any] = {"name": tool_name, "arguments": {"question": question}, "result": None, "error": True}
    s.runs[-1]["tool_calls"].append(entry)
    answer = str(await agent.invoke_async(question)).strip()
    entry.update(result=answer, error=False)
    return answer


@strands_tool
async def consult_auditor(question: str) -> str:
    """Ask the fraud auditor to appraise damaged items."""
    auditor = make_agent("fraud_auditor", "You appraise damaged items for fraud checks.", [appraise_damage])
    return await call_agent("consult_auditor", auditor, question)


@strands_tool
async def ask_claims_specialist(question: str) -> str:
    """Ask the claims specialist to look up policies, file claims and pay them out."""
    specialist = make_agent(
        "claims_specialist",
        "You look up policies, file claims and pay them out.",
        [lookup_policy, file_claim, issue_payout],
    )
    return await call_agent("ask_claims_specialist", specialist, question)


def coordinator() -> Agent:
    """A new coordinator for each request: Strands agents keep their conversation across invocations."""
    return make_agent(
        "claims_coordinator",
        "You coordinate insurance claims; consult the auditor and the claims specialist.",
        [consult_auditor, ask_claims_specialist, delete_account],
    )


async def run(request: str) -> None:
    truth = s.run("claims_coordinator", request)
    model_calls.clear()
    try:
        output, status = str(await coordinator().invoke_async(request)).strip(), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:120]}")
        output, status = None, "error"
    s.finish(output, status, sum(model_calls.values()))
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is the coordinator's, with the agents it called as tools; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in model_calls.items())
        + ".",
    )


SCENARIOS = {
    "agents_as_tools": (
        ["My laptop was damaged in a flood; policy P-310. What is it worth, and please file the claim."],
        [
            tool("consult_auditor", {"question": "Appraise a flood-damaged laptop."}),
            tool("appraise_damage", {"item": "laptop"}),
            text("The laptop's replacement value is 1200 EUR."),
            tool("ask_claims_specialist", {"question": "File a 1200 EUR claim on policy P-310."}),
            tool("lookup_policy", {"policy_id": "P-310"}),
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            text("Claim CL-4471 is filed on P-310 for 1200 EUR."),
            text("Your laptop is valued at 1200 EUR and claim CL-4471 is filed on policy P-310."),
        ],
    ),
    "payout_error": (
        ["Pay out my claim CL-4471 now."],
        [
            tool("ask_claims_specialist", {"question": "Pay out claim CL-4471."}),
            tool("issue_payout", {"claim_id": "CL-4471"}),
            text("The payout failed: the payout system is locked for audit."),
            text("Sorry, claim CL-4471 cannot be paid out yet: the payout system is locked for audit."),
        ],
    ),
    "close_account": (
        ["Close my account please, customer u-981."],
        [tool("delete_account", {"user_id": "u-981"}), text("Account u-981 has been closed.")],
    ),
    "specialist_failure": (
        ["Check policy P-310 for me."],
        [
            tool("ask_claims_specialist", {"question": "Look up policy P-310."}),
            tool("lookup_policy", {"policy_id": "P-310"}),
            failure(500, "model backend down"),
        ],
    ),
}


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        telemetry.tracer_provider.force_flush()


asyncio.run(main())
