"""An AutoGen AgentChat `Swarm` of three agents handing off to each other, traced by OpenInference's AutoGen
AgentChat instrumentation (autogen-core's own runtime tracing writes to the same global TracerProvider, as it
does by default).

`intake_desk` (no tools) hands a request to `claims_officer` (lookup_policy, file_claim, issue_payout, which
fails) with the handoff `pass_to_claims`, or to `records_keeper` (delete_account) with `hand_over_records`,
or answers itself; each is an `AssistantAgent` on `OpenAIChatCompletionClient` (Chat Completions against
OPENAI_BASE_URL) that calls its tools until it answers in text. The swarm ends at the first text an agent
answers (`TextMessageTermination` per agent). Each request is wrapped in a `handle_request` span.

The ground truth is the request run of the swarm: the user's request, the answering agent's text, every model
call made for it (counted at the HTTP client, a retry not counted again), the tool calls (recorded by the
tools, the claims tools of `../insurance.py`) and the handoffs (the team's `HandoffMessage`s; the handoff calls are
not tool calls of the request). In `worker_failure` the model backend fails during claims_officer's turn and
the team raises.
"""

import asyncio
import os
import warnings

import httpx2
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Handoff
from autogen_agentchat.conditions import TextMessageTermination
from autogen_agentchat.messages import HandoffMessage
from autogen_agentchat.teams import Swarm
from autogen_ext.models.openai import OpenAIChatCompletionClient
from client import Scenario, failure, text, tool
from insurance import run_recorded
from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "claims-swarm"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
AutogenAgentChatInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("claims-swarm")
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

s: Scenario  # the scenario being captured; the tools record into its request run
calls = {"model": 0}  # model calls of the request in progress


def model() -> OpenAIChatCompletionClient:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
            calls["model"] += 1

    return OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": True,
            "family": "gpt-4o",
            "structured_output": True,
        },
        http_client=httpx2.AsyncClient(event_hooks={"request": [count]}),
    )


def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return run_recorded(s, "lookup_policy", {"policy_id": policy_id})


def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    return run_recorded(s, "issue_payout", {"amount": amount})


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(s, "delete_account", {"user_id": user_id})


def agent(name: str, description: str, tools: list, handoffs: list) -> AssistantAgent:
    return AssistantAgent(
        name,
        model_client=model(),
        tools=tools,
        handoffs=handoffs,
        description=description,
        system_message=f"You are the insurer's {name.replace('_', ' ')}. {description}",
        reflect_on_tool_use=True,
        max_tool_iterations=10,  # keep calling tools until it answers
    )


def team() -> Swarm:
    return Swarm(
        [
            agent(
                "intake_desk",
                "Takes each request and passes it to the right desk.",
                [],
                [
                    Handoff(target="claims_officer", name="pass_to_claims", description="Claims and payouts."),
                    Handoff(target="records_keeper", name="hand_over_records", description="Customer records."),
                ],
            ),
            agent(
                "claims_officer",
                "Looks up policies, files claims, pays out.",
                [lookup_policy, file_claim, issue_payout],
                [],
            ),
            agent("records_keeper", "Keeps customer records and closes accounts.", [delete_account], []),
        ],
        # the first text an agent answers (the task is a text message too, from the user)
        termination_condition=TextMessageTermination("intake_desk")
        | TextMessageTermination("claims_officer")
        | TextMessageTermination("records_keeper"),
    )


async def run(request: str) -> None:
    truth = s.run("intake_desk", request)
    calls["model"] = 0
    seen: list = []  # what the team streamed, up to its result or its failure
    try:
        async for item in team().run_stream(task=request):
            seen.append(item)
        output, status = seen[-1].messages[-1].to_text(), "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, calls["model"])
    handoffs = [{"from": m.source, "to": m.target} for m in seen if isinstance(m, HandoffMessage)]
    truth.update(handoffs=handoffs, nested_runs_allowed=True)


SCENARIOS = {
    "happy": (
        "My kitchen flooded; file a 900 euro claim on policy PX-1.",
        [
            tool("pass_to_claims", {}),
            tool("lookup_policy", {"policy_id": "PX-1"}),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "forbidden": (
        "Cancel everything and erase my customer record, id u-314.",
        [
            tool("hand_over_records", {}),
            tool("delete_account", {"user_id": "u-314"}),
            text("Your customer record u-314 has been erased."),
        ],
    ),
    "tool_error": (
        "Pay out my settled 2400 euro claim now.",
        [
            tool("pass_to_claims", {}),
            tool("issue_payout", {"amount": 2400}),
            text("The payout failed: it exceeds the payout limit."),
        ],
    ),
    "direct_answer": (
        "Do you handle travel insurance?",
        [text("Yes: travel cover is one of our policies, PX-2 for instance.")],
    ),
    "worker_failure": (
        "What does policy PX-2 cover abroad?",
        [
            tool("pass_to_claims", {}),
            tool("lookup_policy", {"policy_id": "PX-2"}),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    global s
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(request)
            provider.force_flush()


asyncio.run(main())
