"""An AutoGen AgentChat `RoundRobinGroupChat` of three agents with tools, traced by OpenInference's AutoGen
AgentChat instrumentation (autogen-core's own runtime tracing writes to the same global TracerProvider, as it
does by default).

`intake_clerk` (trace_shipment), `dispatch_officer` (reroute_shipment, refund_postage, which fails) and
`accounts_clerk` (delete_account) speak in turn, in that order; each is an `AssistantAgent` on
`OpenAIChatCompletionClient` (Chat Completions against OPENAI_BASE_URL) that calls its tools until it answers
in text. The chat ends when an agent's text says "CASE CLOSED" (or after the three turns). Each request is
wrapped in a `handle_request` span.

The ground truth is the request run of the group chat: the user's request, the closing agent's text, every
model call made for it (counted at the HTTP client, a retry not counted again), the tool calls (recorded by the
tools of `../shipping.py`) and the handoffs: each change of speaker, from the agents whose model clients were
called, in order (checked against the team's own message sources where the team returns). In
`dispatch_failure` the model backend fails during dispatch_officer's turn and the team raises.
"""

import asyncio
import os
import warnings
from itertools import pairwise

import httpx2
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.messages import BaseChatMessage
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient
from client import Scenario, failure, text, tool
from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from shipping import shipping_tools

provider = TracerProvider(resource=Resource.create({"service.name": "parcel-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
AutogenAgentChatInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("parcel-desk")
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

s: Scenario  # the scenario being captured; the tools record into its request run
acted: list[str] = []  # the agent behind each model call of the request in progress
TOOLS = shipping_tools(lambda: s)


def model(owner: str) -> OpenAIChatCompletionClient:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
            acted.append(owner)

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


def agent(name: str, description: str, tools: list[str]) -> AssistantAgent:
    return AssistantAgent(
        name,
        model_client=model(name),
        tools=[TOOLS[t] for t in tools],
        description=description,
        system_message=f"You are the parcel service's {name.replace('_', ' ')}. {description} "
        "Say CASE CLOSED when the customer's request is settled.",
        reflect_on_tool_use=True,
        max_tool_iterations=10,  # keep calling tools until it answers
    )


def team() -> RoundRobinGroupChat:
    return RoundRobinGroupChat(
        [
            agent("intake_clerk", "Reads the request and traces shipments.", ["trace_shipment"]),
            agent(
                "dispatch_officer", "Reroutes shipments and refunds postage.", ["reroute_shipment", "refund_postage"]
            ),
            agent("accounts_clerk", "Keeps customer accounts and closes them.", ["delete_account"]),
        ],
        termination_condition=TextMentionTermination("CASE CLOSED") | MaxMessageTermination(4),
    )


async def run(request: str) -> None:
    truth = s.run("intake_clerk", request)
    acted.clear()
    try:
        result = await team().run(task=request)
        speakers = [m.source for m in result.messages if isinstance(m, BaseChatMessage) and m.source != "user"]
        output, status = result.messages[-1].to_text(), "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        speakers, output, status = None, None, "error"
    handoffs = [{"from": a, "to": b} for a, b in pairwise(acted) if a != b]
    assert speakers is None or handoffs == [{"from": a, "to": b} for a, b in pairwise(speakers) if a != b]
    s.finish(output, status, len(acted))
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note="The request run is the round-robin group chat's, with every agent's model and tool calls; the "
        f"model calls, by whom: {acted}.",
    )


SCENARIOS = {
    "reroute_round": (
        "Parcel TR-8812 is going to the wrong city; send it to the Ghent depot instead.",
        [
            tool("trace_shipment", {"tracking_no": "TR-8812"}),
            text("TR-8812 is at the Lyon hub; dispatch, please reroute it to Ghent."),
            tool("reroute_shipment", {"tracking_no": "TR-8812", "depot": "Ghent"}),
            text("TR-8812 now goes to the Ghent depot, ticket RR-5520. CASE CLOSED"),
        ],
    ),
    "refund_error": (
        "Refund the postage of parcel TR-4040, it never left.",
        [
            text("A postage refund for TR-4040: dispatch handles refunds."),
            tool("refund_postage", {"tracking_no": "TR-4040"}),
            text("The postage refund for TR-4040 failed: the postage ledger is frozen. CASE CLOSED"),
        ],
    ),
    "close_account": (
        "Close my parcel account, customer c-5150.",
        [
            text("An account closure for customer c-5150."),
            text("Nothing to ship or refund; accounts, over to you."),
            tool("delete_account", {"user_id": "c-5150"}),
            text("Account c-5150 is closed. CASE CLOSED"),
        ],
    ),
    "dispatch_failure": (
        "Where is parcel TR-8812, and can it go to Ghent?",
        [
            tool("trace_shipment", {"tracking_no": "TR-8812"}),
            text("TR-8812 is at the Lyon hub; dispatch, can it go to Ghent?"),
            failure(500, "model backend unavailable"),
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
