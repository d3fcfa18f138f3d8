"""AutoGen AgentChat agents called as tools (`AgentTool`), traced by OpenInference's AutoGen AgentChat
instrumentation (autogen-core's own runtime tracing writes to the same global TracerProvider, as it does by
default).

`shipping_lead` is an `AssistantAgent` whose tools are `route_desk` and `postage_desk` (each an `AgentTool`
running another `AssistantAgent` on the task the model gives it, answering with that agent's last message) and
delete_account; route_desk has trace_shipment and reroute_shipment, postage_desk refund_postage (which fails).
Every agent is on `OpenAIChatCompletionClient` (Chat Completions against OPENAI_BASE_URL; the lead's without
parallel tool calls, as AgentTool requires) and calls its tools until it answers in text. Each request is
wrapped in a `handle_request` span. Run from ../autogen-agenttool-openinference-redacted/capture.py, OpenInference's
hide switches are on and every run lists in `lacks` what the trace cannot carry.

The ground truth is the request run of shipping_lead: the user's request, its answer, every agent's model calls
(counted at each agent's HTTP client, a retry not counted again), and the tool calls in the order they started:
an agent tool (its `task` argument and the inner agent's answer, from the lead's own tool events) before the
calls its agent made, recorded by the tools of `../shipping.py`; no handoff (an agent called as a tool answers
its caller). In `desk_failure` the model backend fails during route_desk's turn: the agent tool fails, then the
lead's next model call fails too and its run raises.
"""

import asyncio
import json
import os
import warnings

import httpx2
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import ToolCallExecutionEvent, ToolCallRequestEvent
from autogen_agentchat.tools import AgentTool
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
HIDDEN = globals().get("HIDDEN")  # what the trace cannot carry, with the hide switches on
DESKS = {"route_desk", "postage_desk"}


def model(owner: str, **options: bool) -> OpenAIChatCompletionClient:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") != "0":
            return  # a client retry is not another call
        if owner in DESKS and owner not in acted:  # the desk's first call: its agent tool has started
            s.runs[-1]["tool_calls"].append({"name": owner})
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
        **options,
    )


def agent(name: str, description: str, tools: list, **options: bool) -> AssistantAgent:
    return AssistantAgent(
        name,
        model_client=model(name, **options),
        tools=tools,
        description=description,
        system_message=f"You are the parcel service's {name.replace('_', ' ')}. {description}",
        reflect_on_tool_use=True,
        max_tool_iterations=10,  # keep calling tools until it answers
    )


def lead() -> AssistantAgent:
    route = agent("route_desk", "Traces and reroutes shipments.", [TOOLS["trace_shipment"], TOOLS["reroute_shipment"]])
    postage = agent("postage_desk", "Refunds postage.", [TOOLS["refund_postage"]])
    desks = [AgentTool(route, return_value_as_last_message=True), AgentTool(postage, return_value_as_last_message=True)]
    return agent(
        "shipping_lead",
        "Answers customers, briefing the route and postage desks.",
        [*desks, TOOLS["delete_account"]],
        parallel_tool_calls=False,
    )


def fill_agent_tools(calls: list[dict], seen: list) -> None:
    """Complete each agent tool's entry from the lead's own tool events: the arguments the model gave, the
    desk's answer or that the tool failed."""
    asked = {c.id: c for e in seen if isinstance(e, ToolCallRequestEvent) for c in e.content if c.name in DESKS}
    done = [r for e in seen if isinstance(e, ToolCallExecutionEvent) for r in e.content if r.call_id in asked]
    entries = [c for c in calls if c["name"] in DESKS]
    assert [r.name for r in done] == [c["name"] for c in entries], (done, entries)
    for entry, result in zip(entries, done, strict=True):
        entry.update(
            arguments=json.loads(asked[result.call_id].arguments),
            result=None if result.is_error else result.content,
            error=bool(result.is_error),
        )


async def run(request: str) -> None:
    truth = s.run("shipping_lead", request)
    acted.clear()
    seen: list = []  # what the lead streamed, up to its result or its failure
    try:
        async for item in lead().run_stream(task=request):
            seen.append(item)
        output, status = seen[-1].messages[-1].to_text(), "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    fill_agent_tools(truth["tool_calls"], seen)
    s.finish(output, status, len(acted), lacks=HIDDEN)
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is shipping_lead's, with the model and tool calls of the desks it ran as tools "
        f"(AgentTool); the model calls, by whom: {acted}.",
    )


SCENARIOS = {
    "reroute_via_desk": (
        "Parcel TR-8812 is going to the wrong city; send it to the Ghent depot instead.",
        [
            tool("route_desk", {"task": "Trace TR-8812 and reroute it to the Ghent depot."}),
            tool("trace_shipment", {"tracking_no": "TR-8812"}),
            tool("reroute_shipment", {"tracking_no": "TR-8812", "depot": "Ghent"}),
            text("TR-8812 was at the Lyon hub; rerouted to Ghent, ticket RR-5520."),
            text("Your parcel TR-8812 now goes to the Ghent depot (ticket RR-5520)."),
        ],
    ),
    "refund_error": (
        "Refund the postage of parcel TR-4040, it never left.",
        [
            tool("postage_desk", {"task": "Refund the postage of TR-4040."}),
            tool("refund_postage", {"tracking_no": "TR-4040"}),
            text("The refund of TR-4040 failed: the postage ledger is frozen."),
            text("Sorry, the postage of TR-4040 cannot be refunded yet: our postage ledger is frozen."),
        ],
    ),
    "close_account": (
        "Close my parcel account, customer c-5150.",
        [tool("delete_account", {"user_id": "c-5150"}), text("Your parcel account c-5150 is closed.")],
    ),
    "desk_failure": (
        "Where is parcel TR-8812?",
        [
            tool("route_desk", {"task": "Trace TR-8812."}),
            tool("trace_shipment", {"tracking_no": "TR-8812"}),
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
