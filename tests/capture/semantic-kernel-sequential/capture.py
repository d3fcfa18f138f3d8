"""A Semantic Kernel `SequentialOrchestration` of three ChatCompletionAgents, with SK's own GenAI diagnostics
(sensitive content on).

shipment_tracker (plugin `Tracking`: trace_shipment), route_planner (plugin `Routing`: reroute_shipment,
refund_postage, which fails, and delete_account) and reply_writer (no plugin) run in an `InProcessRuntime`, in
that order: each agent gets the previous agent's answer as its task, and the last agent's answer is the
orchestration's result. Tools reach the model as `<Plugin>-<function>`. The agents stream chat completions
from an AsyncOpenAI client at OPENAI_BASE_URL. SK reads its switches at import:
SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE); chat content is written as Python log
records, sent here through an OTLP LoggerProvider. Each request is wrapped in a `handle_request` span. Run as
../semantic-kernel-sequential-default/capture.py (DEFAULT_SETTINGS=True), only the non-sensitive switch is on
and every run's ground truth lists in `lacks` what the spans then cannot carry.

The ground truth is the request run of the orchestration, entered at shipment_tracker: the user's request, the
orchestration's result (reply_writer's answer), every agent's model calls (counted at each agent's HTTP client, a
retry not counted again), the tool calls as the model named them (recorded by the functions of
`../shipping.py`), and the handoffs (each change of the agent calling the model). In `planner_failure` the
model backend fails during route_planner's turn and the orchestration's result raises.
"""

import asyncio
import logging
import os
import warnings
from itertools import pairwise

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
# with DEFAULT_SETTINGS (the -default source) the sensitive switch stays off: spans without content
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = str(
    not globals().get("DEFAULT_SETTINGS", False)
).lower()

import httpx2
from client import Scenario, failure, text, tool
from openai import AsyncOpenAI
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from semantic_kernel.agents import ChatCompletionAgent, SequentialOrchestration
from semantic_kernel.agents.runtime import InProcessRuntime
from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function
from shipping import shipping_tools

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what spans without content lack
resource = Resource.create({"service.name": "parcel-desk"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
logs = LoggerProvider(resource=resource)
logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
set_logger_provider(logs)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    handler = LoggingHandler(logger_provider=logs)
handler.addFilter(logging.Filter("semantic_kernel"))  # SK's GenAI content events, as its samples do
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.INFO)
tracer = trace.get_tracer("parcel-desk")

s: Scenario  # the scenario being captured; the functions record into its request run
acted: list[str] = []  # the agent behind each model call of the request in progress
TOOLS = shipping_tools(lambda: s)
PLUGIN = {
    "trace_shipment": "Tracking",
    "reroute_shipment": "Routing",
    "refund_postage": "Routing",
    "delete_account": "Routing",
}


def service(owner: str) -> OpenAIChatCompletion:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
            acted.append(owner)

    http = httpx2.AsyncClient(event_hooks={"request": [count]})
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=http)
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


class Tracking:
    @kernel_function(description="Where a shipment is now.")
    def trace_shipment(self, tracking_no: str) -> str:
        return TOOLS["trace_shipment"](tracking_no)


class Routing:
    @kernel_function(description="Send a shipment to another depot.")
    def reroute_shipment(self, tracking_no: str, depot: str) -> str:
        return TOOLS["reroute_shipment"](tracking_no, depot)

    @kernel_function(description="Refund the postage paid for a shipment.")
    def refund_postage(self, tracking_no: str) -> str:
        return TOOLS["refund_postage"](tracking_no)

    @kernel_function(description="Delete a customer's account.")
    def delete_account(self, user_id: str) -> str:
        return TOOLS["delete_account"](user_id)


def agent(name: str, description: str, plugins: list) -> ChatCompletionAgent:
    return ChatCompletionAgent(
        service=service(name),
        name=name,
        description=description,
        instructions=f"You are the parcel service's {name.replace('_', ' ')}. {description}",
        plugins=plugins,
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10),
    )


def orchestration() -> SequentialOrchestration:
    return SequentialOrchestration(
        members=[
            agent("shipment_tracker", "Finds where the customer's shipments are.", [Tracking()]),
            agent("route_planner", "Reroutes shipments, refunds postage and closes accounts.", [Routing()]),
            agent("reply_writer", "Writes the customer's answer from the notes before it.", []),
        ]
    )


async def run(request: str) -> None:
    truth = s.run("shipment_tracker", request)
    acted.clear()
    runtime = InProcessRuntime()
    runtime.start()
    try:
        result = await orchestration().invoke(task=request, runtime=runtime)
        output, status = str((await result.get(timeout=120)).content), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:160]}")
        output, status = None, "error"
    finally:
        await runtime.stop_when_idle()
    for call in truth["tool_calls"]:  # the functions reach the model as <Plugin>-<function>
        call["name"] = f"{PLUGIN[call['name']]}-{call['name']}"
    s.finish(output, status, len(acted), lacks=LACKS if DEFAULT_SETTINGS else None)
    truth.update(
        handoffs=[{"from": a, "to": b} for a, b in pairwise(acted) if a != b],
        nested_runs_allowed=True,
        note="The request run is the sequential orchestration's, with every agent's model and tool calls; "
        f"model calls, by whom: {acted}.",
    )


def call(name: str, arguments: dict) -> dict:
    """A scripted tool call under the name SK gives the model (<Plugin>-<function>)."""
    return tool(f"{PLUGIN[name]}-{name}", arguments)


SCENARIOS = {
    "reroute_chain": (
        "Parcel TR-8812 is going to the wrong city; send it to the Ghent depot instead.",
        [
            call("trace_shipment", {"tracking_no": "TR-8812"}),
            text("TR-8812 is sorted at the Lyon hub, out for delivery tomorrow; the customer wants Ghent."),
            call("reroute_shipment", {"tracking_no": "TR-8812", "depot": "Ghent"}),
            text("Rerouted TR-8812 to the Ghent depot, ticket RR-5520."),
            text("Your parcel TR-8812 now goes to the Ghent depot (ticket RR-5520)."),
        ],
    ),
    "refund_error": (
        "Refund the postage of parcel TR-4040, it never left.",
        [
            call("trace_shipment", {"tracking_no": "TR-4040"}),
            text("TR-4040 is still at the Lyon hub; the customer wants the postage back."),
            call("refund_postage", {"tracking_no": "TR-4040"}),
            text("The postage refund for TR-4040 failed: the postage ledger is frozen."),
            text("Sorry, we could not refund the postage of TR-4040 yet: our postage ledger is frozen."),
        ],
    ),
    "close_account": (
        "Close my parcel account, customer c-5150.",
        [
            text("No shipment to trace; customer c-5150 wants the account closed."),
            call("delete_account", {"user_id": "c-5150"}),
            text("Account c-5150 deleted."),
            text("Your parcel account c-5150 is closed."),
        ],
    ),
    "planner_failure": (
        "Where is parcel TR-8812, and can it go to Ghent?",
        [
            call("trace_shipment", {"tracking_no": "TR-8812"}),
            text("TR-8812 is at the Lyon hub; the customer asks whether it can go to Ghent."),
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
            logs.force_flush()


asyncio.run(main())
