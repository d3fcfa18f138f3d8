"""A Strands Agents multi-agent `Graph` of three agents with Strands' own telemetry (StrandsTelemetry + OTLP/HTTP
exporter).

triage_clerk (no tools) reads the request and names the desk it needs; conditional edges run
shipments_desk (trace_shipment, reroute_shipment, refund_postage, which fails) when its answer says SHIPMENTS,
or accounts_desk (delete_account) when it says ACCOUNTS. The graph gives the desk the request and triage's
answer; the desk's answer is the graph's last. The OpenAI model provider streams chat completions from the
scripted model at OPENAI_BASE_URL. Message content is on by default (span events). Each request is wrapped in
a `handle_request` span from a tracer of the same provider.

The ground truth is the request run of the graph: the user's request, the last node's answer, every agent's
model calls (counted by each agent's BeforeModelCallEvent hook) and tool calls (recorded by the tools of
`../shipping.py`), and the handoffs, from the graph's own handoff events (one node's batch to the next). In
`desk_failure` the model backend fails during shipments_desk's turn and the graph raises.
"""

import asyncio
import os
from collections import Counter

from client import Scenario, failure, text, tool
from opentelemetry import trace
from shipping import shipping_tools
from strands import Agent
from strands import tool as strands_tool
from strands.hooks import BeforeModelCallEvent
from strands.models.openai import OpenAIModel
from strands.multiagent import GraphBuilder
from strands.multiagent.graph import GraphState
from strands.telemetry import StrandsTelemetry

os.environ.setdefault("OTEL_SERVICE_NAME", "parcel-desk")  # read by StrandsTelemetry's resource
telemetry = StrandsTelemetry().setup_otlp_exporter()  # OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
tracer = trace.get_tracer("parcel-desk")
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()
TOOLS = {name: strands_tool(f) for name, f in shipping_tools(lambda: s).items()}


def model() -> OpenAIModel:
    client_args = {"base_url": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]}
    return OpenAIModel(client_args=client_args, model_id="gpt-4o-mini")


def make_agent(name: str, prompt: str, tools: list[str]) -> Agent:
    agent = Agent(
        name=name,
        model=model(),
        system_prompt=f"You are the parcel service's {name.replace('_', ' ')}. {prompt}",
        tools=[TOOLS[t] for t in tools],
        callback_handler=None,
    )

    def count(event: BeforeModelCallEvent) -> None:  # the agent's own hook, not the spans
        model_calls[name] += 1

    agent.hooks.add_callback(BeforeModelCallEvent, count)
    return agent


def routed_to(desk: str):
    """The edge condition: triage's answer names the desk."""

    def condition(state: GraphState) -> bool:
        triage = state.results.get("triage_clerk")
        return triage is not None and desk in str(triage.result)

    return condition


def graph():
    """A new graph for each request: Strands agents keep their conversation across invocations."""
    builder = GraphBuilder()
    builder.add_node(make_agent("triage_clerk", "Name the desk: SHIPMENTS or ACCOUNTS.", []), "triage_clerk")
    builder.add_node(
        make_agent(
            "shipments_desk",
            "Trace, reroute and refund shipments.",
            ["trace_shipment", "reroute_shipment", "refund_postage"],
        ),
        "shipments_desk",
    )
    builder.add_node(make_agent("accounts_desk", "Close customer accounts.", ["delete_account"]), "accounts_desk")
    builder.add_edge("triage_clerk", "shipments_desk", condition=routed_to("SHIPMENTS"))
    builder.add_edge("triage_clerk", "accounts_desk", condition=routed_to("ACCOUNTS"))
    builder.set_entry_point("triage_clerk")
    return builder.build()


async def run(request: str) -> None:
    truth = s.run("triage_clerk", request)
    model_calls.clear()
    handoffs, result = [], None
    try:
        async for event in graph().stream_async(request):
            if event.get("type") == "multiagent_handoff":
                handoffs += [{"from": a, "to": b} for a in event["from_node_ids"] for b in event["to_node_ids"]]
            elif event.get("type") == "multiagent_result":
                result = event["result"]
        last = result.execution_order[-1]
        message = result.results[last.node_id].result.message
        output, status = "".join(block["text"] for block in message["content"] if "text" in block), "ok"
    except Exception as exc:  # a node failed: the graph raises
        print(f"   graph failed as scripted: {type(exc).__name__}: {str(exc)[:120]}")
        output, status = None, "error"
    s.finish(output, status, sum(model_calls.values()))
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note="The request run is the graph's, with every agent's model and tool calls; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in model_calls.items()),
    )


SCENARIOS = {
    "reroute_path": (
        "Parcel TR-8812 is going to the wrong city; send it to the Ghent depot instead.",
        [
            text("SHIPMENTS: reroute TR-8812 to Ghent."),
            tool("trace_shipment", {"tracking_no": "TR-8812"}),
            tool("reroute_shipment", {"tracking_no": "TR-8812", "depot": "Ghent"}),
            text("TR-8812 was at the Lyon hub and now goes to the Ghent depot, ticket RR-5520."),
        ],
    ),
    "refund_error": (
        "Refund the postage of parcel TR-4040, it never left.",
        [
            text("SHIPMENTS: postage refund for TR-4040."),
            tool("refund_postage", {"tracking_no": "TR-4040"}),
            text("Sorry, the postage of TR-4040 could not be refunded: the postage ledger is frozen."),
        ],
    ),
    "close_account": (
        "Close my parcel account, customer c-5150.",
        [
            text("ACCOUNTS: close account c-5150."),
            tool("delete_account", {"user_id": "c-5150"}),
            text("Your parcel account c-5150 is closed."),
        ],
    ),
    "desk_failure": (
        "Where is parcel TR-8812?",
        [
            text("SHIPMENTS: trace TR-8812."),
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
            telemetry.tracer_provider.force_flush()


asyncio.run(main())
