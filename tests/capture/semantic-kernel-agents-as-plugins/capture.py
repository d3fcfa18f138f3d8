"""Semantic Kernel agents called as tools: a ChatCompletionAgent whose plugins include two other
ChatCompletionAgents (SK exposes an agent given as a plugin as the function `<agent>-<agent>`, which runs that
agent's get_response), with SK's own GenAI diagnostics (sensitive content on).

desk_manager has the agents depot_router (plugin `Depot`: trace_shipment, reroute_shipment) and postage_clerk
(plugin `Postage`: refund_postage, which fails) and the plugin `Accounts` (delete_account). Every agent streams
chat completions from an AsyncOpenAI client at OPENAI_BASE_URL. SK reads its switches at import:
SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE); chat content is written as Python log
records, sent here through an OTLP LoggerProvider. Each request is wrapped in a `handle_request` span. Run as
../semantic-kernel-agents-as-plugins-default/capture.py (DEFAULT_SETTINGS=True), only the non-sensitive switch is
on and every run's ground truth lists in `lacks` what the spans then cannot carry.

The ground truth is the request run of desk_manager: the user's request, its answer, every agent's model calls
(counted at each agent's HTTP client, a retry not counted again), and the tool calls as the model named them in
the order they started: an agent's function (seen by an auto-function-invocation filter on desk_manager's
kernel: its arguments, the agent's answer or its failure) before the calls that agent made (recorded by the
functions of `../shipping.py`); no handoff (an agent called as a tool answers its caller). In `router_failure`
the model backend fails during depot_router's turn: its function fails, then desk_manager's next model call
fails too and the request raises.
"""

import asyncio
import logging
import os
import warnings

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
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.filters import AutoFunctionInvocationContext, FilterTypes
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
    "trace_shipment": "Depot",
    "reroute_shipment": "Depot",
    "refund_postage": "Postage",
    "delete_account": "Accounts",
}
AGENTS = ("depot_router", "postage_clerk")
FAILED = "An error occurred while invoking the function "  # SK's result for a function that raised


def service(owner: str) -> OpenAIChatCompletion:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
            acted.append(owner)

    http = httpx2.AsyncClient(event_hooks={"request": [count]})
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=http)
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


class Depot:
    @kernel_function(description="Where a shipment is now.")
    def trace_shipment(self, tracking_no: str) -> str:
        return TOOLS["trace_shipment"](tracking_no)

    @kernel_function(description="Send a shipment to another depot.")
    def reroute_shipment(self, tracking_no: str, depot: str) -> str:
        return TOOLS["reroute_shipment"](tracking_no, depot)


class Postage:
    @kernel_function(description="Refund the postage paid for a shipment.")
    def refund_postage(self, tracking_no: str) -> str:
        return TOOLS["refund_postage"](tracking_no)


class Accounts:
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


async def agent_calls(context: AutoFunctionInvocationContext, next) -> None:
    """Record a call of an agent given as a plugin when it starts, and its answer or failure when it ends."""
    if context.function.plugin_name not in AGENTS:
        await next(context)
        return
    call = {"name": context.function.fully_qualified_name, "arguments": dict(context.arguments)}
    s.runs[-1]["tool_calls"].append(call)
    await next(context)
    # SK catches a function's exception beneath the filters and answers the model with this text instead
    value = None if context.function_result is None else str(context.function_result.value)
    failed = value is None or value.startswith(FAILED)
    call.update(result=None if failed else value, error=failed)


def manager() -> ChatCompletionAgent:
    depot = agent("depot_router", "Traces and reroutes shipments.", [Depot()])
    postage = agent("postage_clerk", "Refunds postage.", [Postage()])
    lead = agent("desk_manager", "Answers customers, asking the depot router and the postage clerk.", [])
    for plugin in (depot, postage, Accounts()):
        lead.kernel.add_plugin(plugin)
    lead.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, agent_calls)
    return lead


async def run(request: str) -> None:
    truth = s.run("desk_manager", request)
    acted.clear()
    try:
        output, status = str((await manager().get_response(messages=request)).content), "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {str(exc)[:160]}")
        output, status = None, "error"
    for call in truth["tool_calls"]:  # the plain functions reach the model as <Plugin>-<function>
        if call["name"] in PLUGIN:
            call["name"] = f"{PLUGIN[call['name']]}-{call['name']}"
    s.finish(output, status, len(acted), lacks=LACKS if DEFAULT_SETTINGS else None)
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is desk_manager's, with the model and tool calls of the agents it ran as plugins; "
        f"model calls, by whom: {acted}.",
    )


def call(name: str, arguments: dict) -> dict:
    """A scripted call under the name SK gives the model: <Plugin>-<function>, an agent's `<agent>-<agent>`."""
    return tool(f"{PLUGIN[name]}-{name}" if name in PLUGIN else f"{name}-{name}", arguments)


SCENARIOS = {
    "reroute_via_agent": (
        "Parcel TR-8812 is going to the wrong city; send it to the Ghent depot instead.",
        [
            call("depot_router", {"messages": "Trace TR-8812 and reroute it to the Ghent depot."}),
            call("trace_shipment", {"tracking_no": "TR-8812"}),
            call("reroute_shipment", {"tracking_no": "TR-8812", "depot": "Ghent"}),
            text("TR-8812 was at the Lyon hub; rerouted to Ghent, ticket RR-5520."),
            text("Your parcel TR-8812 now goes to the Ghent depot (ticket RR-5520)."),
        ],
    ),
    "refund_error": (
        "Refund the postage of parcel TR-4040, it never left.",
        [
            call("postage_clerk", {"messages": "Refund the postage of TR-4040."}),
            call("refund_postage", {"tracking_no": "TR-4040"}),
            text("The refund of TR-4040 failed: the postage ledger is frozen."),
            text("Sorry, the postage of TR-4040 cannot be refunded yet: our postage ledger is frozen."),
        ],
    ),
    "close_account": (
        "Close my parcel account, customer c-5150.",
        [call("delete_account", {"user_id": "c-5150"}), text("Your parcel account c-5150 is closed.")],
    ),
    "router_failure": (
        "Where is parcel TR-8812?",
        [
            call("depot_router", {"messages": "Trace TR-8812."}),
            call("trace_shipment", {"tracking_no": "TR-8812"}),
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
