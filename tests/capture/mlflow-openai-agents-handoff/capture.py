"""MLflow Tracing (`mlflow.openai.autolog()`, which also traces the OpenAI Agents SDK) on an Agents SDK triage
team of an insurer: handoffs under tool names of the team's own and an agent called as a tool.

service_desk (the entry agent) hands the customer to claims_adjuster (`pass_to_claims`) or records_clerk
(`hand_over_records`), `handoff(..., tool_name_override=...)`. claims_adjuster has lookup_policy, file_claim and
issue_payout (fails), the tools of `insurance.py`, and asks claims_historian, an agent with claim_status, through
`claims_historian.as_tool(tool_name="ask_claims_history")`; records_clerk has delete_account and premium_quote.
The model is `OpenAIChatCompletionsModel` on an `AsyncOpenAI` client (OPENAI_BASE_URL). MLflow exports over OTLP
because OTEL_EXPORTER_OTLP_ENDPOINT is set; with MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false it adds its exporting
processor to the service's own TracerProvider (`mlflow.tracing.enable()` at start-up), so each request's
`handle_request` span is the trace's root.

The ground truth is the request run of `Runner.run`: the entry agent's name, the user's request, the answer the
user got, every agent's model calls and non-handoff tool calls in the order they started (the agent tool's call
placed when it starts, its agent's calls after it), and the handoffs; it comes from the SDK's own RunHooks (given
to the runner and to the agent tool's nested run) and from what the tools received and returned. In
`claims_failure` the model backend fails during claims_adjuster's turn and the run raises.
"""

import asyncio
import os

os.environ["MLFLOW_USE_DEFAULT_TRACER_PROVIDER"] = "false"

import mlflow
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff
from agents_hooks import Hooks
from client import Scenario, each, failure, text, tool, tools
from hotel import recorded_tools
from insurance import FUNCTIONS
from openai import AsyncOpenAI
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

provider = TracerProvider(resource=Resource.create({"service.name": "insurance-service"}))
trace.set_tracer_provider(provider)
mlflow.tracing.enable()  # MLflow joins the provider now, before the service's first span
mlflow.openai.autolog()
tracer = trace.get_tracer("insurance-service")
model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI(max_retries=0))
s: Scenario  # the scenario being captured; the tools record into its request run
AGENT_TOOL = "ask_claims_history"  # claims_historian called as a tool
TOOLS = {name: function_tool(f) for name, f in recorded_tools(FUNCTIONS, lambda: s).items()}


def team(hooks: Hooks) -> Agent:
    """The entry agent of one request; the historian's tool form reports its nested run to the same hooks."""
    historian = Agent(
        name="claims_historian",
        instructions="You report where claims stand.",
        model=model,
        tools=[TOOLS["claim_status"]],
    )
    adjuster = Agent(
        name="claims_adjuster",
        instructions="You file claims and pay them out; ask the claims history for past claims.",
        model=model,
        tools=[
            *(TOOLS[name] for name in ("lookup_policy", "file_claim", "issue_payout")),
            historian.as_tool(
                tool_name=AGENT_TOOL, tool_description="Ask the claims historian about past claims.", hooks=hooks
            ),
        ],
    )
    clerk = Agent(
        name="records_clerk",
        instructions="You quote premiums and close customer records.",
        model=model,
        tools=[TOOLS["delete_account"], TOOLS["premium_quote"]],
    )
    return Agent(
        name="service_desk",
        instructions="You route insurance customers to the right desk.",
        model=model,
        handoffs=[
            handoff(adjuster, tool_name_override="pass_to_claims"),
            handoff(clerk, tool_name_override="hand_over_records"),
        ],
    )


async def serve(request: str) -> None:
    request_run = s.run("service_desk", request)
    request_run["handoffs"] = []
    hooks = Hooks(request_run, AGENT_TOOL)
    try:
        result = await Runner.run(team(hooks), request, hooks=hooks)
        output, status = result.final_output, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(hooks.calls.values()))
    request_run.update(nested_runs_allowed=True, note=hooks.note("service_desk"))


TO_CLAIMS = tool("pass_to_claims", {})
SCENARIOS = {
    "claim_filed": (
        "My kitchen flooded; file a 900 euro claim on policy PX-1.",
        [
            TO_CLAIMS,
            tool("lookup_policy", {"policy_id": "PX-1"}),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "history_asked": (
        "How are my claims C-1 and C-2 doing?",
        [
            TO_CLAIMS,
            tool(AGENT_TOOL, {"input": "Status of claims C-1 and C-2"}),
            tools(("claim_status", {"claim_id": "C-1"}), ("claim_status", {"claim_id": "C-2"})),
            text("C-1 is under review; C-2 was paid on 3 March."),
            text("Claim C-1 is still under review, and C-2 was paid on 3 March."),
        ],
    ),
    "payout_refused": (
        "Pay out my settled 2400 euro claim now.",
        [
            TO_CLAIMS,
            tool("issue_payout", {"amount": 2400}),
            text("The payout failed: 2400 EUR exceeds the payout limit."),
        ],
    ),
    "record_erased": (
        "Cancel everything and erase my customer record, id u-314.",
        [
            tool("hand_over_records", {}),
            tool("delete_account", {"user_id": "u-314"}),
            text("Your customer record u-314 has been erased."),
        ],
    ),
    "claims_failure": (
        "What does policy PX-2 cover abroad?",
        [TO_CLAIMS, tool("lookup_policy", {"policy_id": "PX-2"}), failure(503, "model backend overloaded")],
    ),
}


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await serve(request)
        provider.force_flush()


asyncio.run(main())
