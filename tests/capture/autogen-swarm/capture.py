"""An AutoGen AgentChat `Swarm` of three agents handing off with custom-named handoffs, traced by autogen-core's
native tracing, with its event logger exported as OTLP log records.

reception (no tools), claims (lookup_policy, file_claim) and payouts (issue_payout, which fails, and
delete_account) are `AssistantAgent`s on `OpenAIChatCompletionClient`. Each declares its handoffs with
`Handoff(target=..., name=...)`: reception `pass_to_claims` and `hand_over_payouts`, claims
`hand_over_payouts`. A handoff call ends the agent's turn with a `HandoffMessage` and the swarm gives the
floor to its target; the team stops at the first plain text answer of an agent (`TextMessageTermination`). autogen-core
traces to the global TracerProvider without content; its structured events (`autogen_core.events`) go
through an OTel LoggingHandler as OTLP log records. Each request is wrapped in a `handle_request` span. Run as
../autogen-swarm-default/capture.py (DEFAULT_SETTINGS=True), only the spans are exported, and every run's ground
truth lists in `lacks` what spans alone cannot carry.

The ground truth is the request run of the swarm: the user's request, the last agent's answer, every model
call made for it (counted at the HTTP client, a retry not counted again), the tool calls (recorded by the
tools), and the handoffs from the team's own `HandoffMessage`s. In `claims_failure` the model backend fails
during claims' turn and the team raises.
"""

import asyncio
import logging
import os
import warnings

import httpx2
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Handoff
from autogen_agentchat.conditions import TextMessageTermination
from autogen_agentchat.messages import HandoffMessage
from autogen_agentchat.teams import Swarm
from autogen_core import EVENT_LOGGER_NAME
from autogen_ext.models.openai import OpenAIChatCompletionClient
from claims import desk_requests, desk_tools, each_request
from client import Scenario, tool
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

resource = Resource.create({"service.name": "claims-desk"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)  # autogen-core traces to the global provider
DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # spans only: the event logger is not exported
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results", "llm_calls"]  # what spans alone lack
logs = LoggerProvider(resource=resource)
if not DEFAULT_SETTINGS:
    logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    set_logger_provider(logs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        events = logging.getLogger(EVENT_LOGGER_NAME)
        events.addHandler(LoggingHandler(logger_provider=logs))
        events.setLevel(logging.INFO)
tracer = trace.get_tracer("claims-desk")
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

s: Scenario  # the scenario being captured; the tools record into its request run
acted: list[str] = []  # the agent behind each model call of the request in progress


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


TOOLS = desk_tools(lambda: s)


TO_CLAIMS = Handoff(target="claims", name="pass_to_claims", description="Pass the customer to the claims desk.")
TO_PAYOUTS = Handoff(target="payouts", name="hand_over_payouts", description="Hand over to payouts and accounts.")


def agent(name: str, description: str, tools: list, handoffs: list[Handoff]) -> AssistantAgent:
    return AssistantAgent(
        name,
        model_client=model(name),
        tools=tools,
        handoffs=handoffs,
        description=description,
        system_message=f"You are the insurer's {name} desk. {description}",
        reflect_on_tool_use=True,
        max_tool_iterations=10,  # keep calling tools until it answers or hands off
    )


def team() -> Swarm:
    return Swarm(
        [
            agent("reception", "Greets customers and passes them on.", [], [TO_CLAIMS, TO_PAYOUTS]),
            agent(
                "claims",
                "Looks up policies and files claims.",
                [TOOLS["lookup_policy"], TOOLS["file_claim"]],
                [TO_PAYOUTS],
            ),
            agent(
                "payouts", "Pays out claims and closes accounts.", [TOOLS["issue_payout"], TOOLS["delete_account"]], []
            ),
        ],
        # the first plain answer of an agent ends the request (the task itself is a text message too)
        termination_condition=TextMessageTermination("reception")
        | TextMessageTermination("claims")
        | TextMessageTermination("payouts"),
    )


async def run(request: str) -> None:
    truth = s.run("reception", request)
    acted.clear()
    lacks = LACKS if DEFAULT_SETTINGS else []
    handoffs: list[dict[str, str]] = []
    output, status = None, "ok"
    try:
        async for message in team().run_stream(task=request):
            if isinstance(message, HandoffMessage):
                handoffs.append({"from": message.source, "to": message.target})
            elif hasattr(message, "messages"):  # the TaskResult closes the stream
                output = message.messages[-1].to_text()
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
        # AutoGen records a model call only when it succeeds: the call that failed is not in the trace.
        lacks = sorted({*lacks, "llm_calls"})
    s.finish(output, status, len(acted), lacks=lacks or None)
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note=f"The request run is the swarm's, with every agent's model and tool calls; the model calls, by whom: "
        f"{acted}.",
    )


SCENARIOS = desk_requests(tool("pass_to_claims", {}), tool("hand_over_payouts", {}))


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        provider.force_flush()
        logs.force_flush()


asyncio.run(main())
