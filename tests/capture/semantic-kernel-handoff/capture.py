"""A Semantic Kernel `HandoffOrchestration` of three ChatCompletionAgents, with SK's own GenAI diagnostics
(sensitive content on).

reception (no plugin), claims (plugin `Claims`: lookup_policy, file_claim) and payouts (plugin `Payouts`:
issue_payout, which fails, and delete_account) run in an `InProcessRuntime`; `OrchestrationHandoffs` lets
reception hand over to claims and payouts, and claims to payouts. SK gives every member its own `Handoff`
plugin: `transfer_to_<agent>` per connection and `complete_task(task_summary)`, which ends the orchestration
with the summary as its result; tools reach the model as `<Plugin>-<function>`. The agents stream chat
completions from an AsyncOpenAI client at OPENAI_BASE_URL. SK reads its switches at import:
SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE); chat content is written as Python log
records, sent here through an OTLP LoggerProvider. Each request is wrapped in a `handle_request` span. Run as
../semantic-kernel-handoff-default/capture.py (DEFAULT_SETTINGS=True), only the non-sensitive switch is on and
every run's ground truth lists in `lacks` what the spans then cannot carry.

The ground truth is the request run of the orchestration, entered at reception: the user's request, the
answer (the summary the last agent gave `complete_task`, which the orchestration's result frames in words of its
own that no span carries), every agent's model calls (counted at each agent's HTTP client, a retry not counted
again), the tool calls as the model named them (recorded by the functions), the handoffs (each change of the
agent calling the model), and neither the transfer nor the `complete_task` calls as tool calls. In
`claims_failure` the model backend fails during claims' turn and the orchestration's result raises.
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
from claims import desk_requests, each_request, run_recorded
from client import Scenario, tool
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
from semantic_kernel.agents import ChatCompletionAgent, HandoffOrchestration, OrchestrationHandoffs
from semantic_kernel.agents.runtime import InProcessRuntime
from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what spans without content lack
resource = Resource.create({"service.name": "claims-desk"})
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
tracer = trace.get_tracer("claims-desk")

s: Scenario  # the scenario being captured; the functions record into its request run
acted: list[str] = []  # the agent behind each model call of the request in progress
PLUGIN = {"lookup_policy": "Claims", "file_claim": "Claims", "issue_payout": "Payouts", "delete_account": "Payouts"}


def service(owner: str) -> OpenAIChatCompletion:
    async def count(request: httpx2.Request) -> None:
        if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
            acted.append(owner)

    http = httpx2.AsyncClient(event_hooks={"request": [count]})
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=http)
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


class Claims:
    @kernel_function(description="Look up an insurance policy by id.")
    def lookup_policy(self, policy_id: str) -> str:
        return run_recorded(s, "lookup_policy", {"policy_id": policy_id})

    @kernel_function(description="File a claim against a policy.")
    def file_claim(self, policy_id: str, amount: int) -> str:
        return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


class Payouts:
    @kernel_function(description="Pay out an approved claim.")
    def issue_payout(self, claim_id: str) -> str:
        return run_recorded(s, "issue_payout", {"claim_id": claim_id})

    @kernel_function(description="Delete a customer's account.")
    def delete_account(self, user_id: str) -> str:
        return run_recorded(s, "delete_account", {"user_id": user_id})


def agent(name: str, description: str, plugins: list) -> ChatCompletionAgent:
    return ChatCompletionAgent(
        service=service(name),
        name=name,
        description=description,
        instructions=f"You are the insurer's {name} desk. {description}",
        plugins=plugins,
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10),
    )


def orchestration() -> HandoffOrchestration:
    members = [
        agent("reception", "Greets customers and passes them on.", []),
        agent("claims", "Looks up policies and files claims.", [Claims()]),
        agent("payouts", "Pays out claims and closes accounts.", [Payouts()]),
    ]
    handoffs = (
        OrchestrationHandoffs()
        .add_many("reception", {"claims": "Pass the customer to claims.", "payouts": "Hand over to payouts."})
        .add("claims", "payouts", "Hand over to payouts for the payout.")
    )
    return HandoffOrchestration(members=members, handoffs=handoffs)


COMPLETED = "Task is completed with summary: "


async def run(request: str) -> None:
    truth = s.run("reception", request)
    acted.clear()
    runtime = InProcessRuntime()
    runtime.start()
    try:
        result = await orchestration().invoke(task=request, runtime=runtime)
        # the orchestration frames the summary its last agent gave `complete_task`; the answer is that summary
        output = str((await result.get(timeout=120)).content).removeprefix(COMPLETED)
        status = "ok"
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
        note="The request run is the orchestration's, with every agent's model and tool calls; SK's "
        f"Handoff-transfer_to_* and Handoff-complete_task calls are control, not tools; model calls, by whom: {acted}.",
    )


def qualified(replies: list[dict]) -> list[dict]:
    """The scripted tool calls under the names SK gives the model (<Plugin>-<function>)."""
    for reply in replies:
        for call in reply.get("tool_calls", []):
            if call["name"] in PLUGIN:
                call["name"] = f"{PLUGIN[call['name']]}-{call['name']}"
    return replies


SCENARIOS = {
    name: (requests, qualified(replies))
    for name, (requests, replies) in desk_requests(
        tool("Handoff-transfer_to_claims", {}),
        tool("Handoff-transfer_to_payouts", {}),
        answer=lambda summary: tool("Handoff-complete_task", {"task_summary": summary}),
    ).items()
}


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the functions record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        provider.force_flush()
        logs.force_flush()


asyncio.run(main())
