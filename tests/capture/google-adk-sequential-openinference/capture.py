"""A Google ADK `SequentialAgent` workflow of two agents, traced by OpenInference's Google ADK instrumentation
(ADK's own GenAI spans go to the same global TracerProvider, as they do by default).

`claims_pipeline` runs `claim_reviewer` (lookup_policy, claim_status), which reviews the request and writes its
finding to the session state (`output_key`), then `claim_processor` (file_claim, issue_payout, which fails,
delete_account), which acts on that finding and answers the user. Both are `LlmAgent`s on ADK's LiteLlm model
(`openai/` against OPENAI_BASE_URL). A raising tool is recovered by `on_tool_error_callback`, which answers the
model `{"error": ...}` (ADK otherwise aborts). Message content is on (OpenInference's default; ADK's own spans
with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY). Each request is wrapped in a
`handle_request` span.

The ground truth is one request run per user request, the workflow's: every agent's model calls (counted by
before_model_callback), the tool calls in the order they ran (recorded by the tools) and the answer the user
got, the runner's last final response. The workflow, not an agent, moves from the reviewer to the processor,
so no handoff is recorded (and none compared). In `processor_failure` the model backend fails during the
processor's turn and the runner raises.
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

from claims import run_recorded
from client import Scenario, failure, text, tool
from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types
from openinference.instrumentation.google_adk import GoogleADKInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "claims-pipeline"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
GoogleADKInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("claims-pipeline")

S: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls per agent in the current request


def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return run_recorded(S, "lookup_policy", {"policy_id": policy_id})


def claim_status(claim_id: str) -> str:
    """Where a claim stands."""
    return run_recorded(S, "claim_status", {"claim_id": claim_id})


def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(S, "file_claim", {"policy_id": policy_id, "amount": amount})


def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    return run_recorded(S, "issue_payout", {"amount": amount})


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(S, "delete_account", {"user_id": user_id})


def count_call(callback_context, llm_request):
    CALLS[callback_context.agent_name] = CALLS.get(callback_context.agent_name, 0) + 1


def recover(tool, args, tool_context, error):
    return {"error": str(error)}


def model():
    return LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"])


pipeline = SequentialAgent(
    name="claims_pipeline",
    sub_agents=[
        LlmAgent(
            name="claim_reviewer",
            model=model(),
            instruction="Review the customer's request: check the policy or claim it names, and state what to do.",
            tools=[lookup_policy, claim_status],
            output_key="review",
            before_model_callback=count_call,
            on_tool_error_callback=recover,
        ),
        LlmAgent(
            name="claim_processor",
            model=model(),
            instruction="Act on the review ({review}): file claims, pay out, close accounts; then answer the user.",
            tools=[file_claim, issue_payout, delete_account],
            before_model_callback=count_call,
            on_tool_error_callback=recover,
        ),
    ],
)

SCENARIOS = {
    "happy": (
        "My kitchen flooded; file a 900 euro claim on policy PX-1.",
        [
            tool("lookup_policy", {"policy_id": "PX-1"}),
            text("PX-1 is home cover with a 150 EUR excess: file the 900 EUR claim."),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "forbidden": (
        "Cancel everything and erase my customer record, id u-314.",
        [
            text("The customer u-314 asks for the account to be closed."),
            tool("delete_account", {"user_id": "u-314"}),
            text("Your customer record u-314 has been erased."),
        ],
    ),
    "tool_error": (
        "Pay out my settled claim C-2 of 2400 euro now.",
        [
            tool("claim_status", {"claim_id": "C-2"}),
            text("C-2 is settled: pay out 2400 EUR."),
            tool("issue_payout", {"amount": 2400}),
            text("The payout failed: it exceeds the payout limit."),
        ],
    ),
    "processor_failure": (
        "File a 300 euro claim on policy PX-2.",
        [
            tool("lookup_policy", {"policy_id": "PX-2"}),
            text("PX-2 is travel cover with a 50 EUR excess: file the 300 EUR claim."),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def serve(request: str) -> None:
    """One user request through an InMemoryRunner at the workflow; records its ground truth."""
    run = S.run("claims_pipeline", request)
    run.update(nested_runs_allowed=True)
    CALLS.clear()
    runner = InMemoryRunner(agent=pipeline, app_name="claims")
    session = await runner.session_service.create_session(app_name="claims", user_id="customer-1")
    answer, status = None, "ok"
    try:
        async for event in runner.run_async(
            user_id="customer-1",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text=request)]),
        ):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(p.text or "" for p in event.content.parts)  # the last agent's is the user's
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        answer, status = None, "error"
    S.finish(answer, status, sum(CALLS.values()))
    run["note"] = f"Model calls per agent: {dict(CALLS)}; the workflow runs the reviewer, then the processor."


async def main() -> None:
    global S
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as S:
            with tracer.start_as_current_span("handle_request"):
                await serve(request)
            provider.force_flush()


asyncio.run(main())
