"""Google ADK workflow agents traced by openinference-instrumentation-google-adk (which silences ADK's own spans).

`claims_pipeline` is a `SequentialAgent` of two LlmAgents: `intake_clerk` (lookup_policy) notes the policy,
then `claims_assessor` (file_claim) files the claim; `claims_assessor` has `payout_officer` (issue_payout,
which fails, and delete_account) as a sub-agent, so its model can call ADK's transfer tool, after which
payout_officer acts and answers in the same invocation. In `review_loop` the root is `claims_review_loop`
instead, a `LoopAgent` of `claims_drafter` (appraise_damage) and `claims_reviewer`, whose `approve_and_close`
tool escalates to end the loop (and skips the model call after it). The agents use
LiteLlm('openai/gpt-4o-mini') against the scripted model. ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1 keeps ADK's
`call_llm` span, which the instrumentor fills with the model call (ADK 2.x's default schema has none, and the
trace then holds no model call). Run as ../google-adk-workflow-openinference-default/capture.py
(DEFAULT_SETTINGS=True), ADK keeps its default schema, and every run's ground truth lists in `lacks` what a
trace without model call spans cannot carry. The instrumentor writes through the global TracerProvider
(OTLP/HTTP protobuf); a raising tool is recovered by `on_tool_error_callback`, which answers the model
`{"error": ...}`. Each request is wrapped in a `handle_request` span.

The ground truth is one request run per user request, entered at the root workflow agent: every agent's model
calls (counted by before_model_callback), the tool calls in the order they ran, the transfer as a handoff
(never as a tool call; moving from one step of the workflow to the next is the workflow's, not a handoff), and
the answer the user got last (the final response of the last agent that answered). In `assessor_failure` the
model backend fails during claims_assessor's turn, the second step.
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
# ADK 2.x's default telemetry schema (v2) has no `call_llm` span, the one OpenInference records model calls on:
# without this switch (DEFAULT_SETTINGS, the -default source) the trace holds no model call at all.
os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "" if globals().get("DEFAULT_SETTINGS") else "1"

from adk_runner import counting_agent, workflow_request
from claims import desk_tools, each_request, run_recorded
from client import Scenario, failure, text, tool
from google.adk.agents import LlmAgent, LoopAgent, SequentialAgent
from google.adk.tools.tool_context import ToolContext
from openinference.instrumentation.google_adk import GoogleADKInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
LACKS = ["llm_calls", "messages"]  # what the trace lacks without a model call span
provider = TracerProvider(resource=Resource.create({"service.name": "claims-pipeline"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
GoogleADKInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("claims-pipeline")

s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls per agent in the current request


TOOLS = desk_tools(lambda: s)


def appraise_damage(item: str) -> str:
    """Appraise the value of a damaged item."""
    return run_recorded(s, "appraise_damage", {"item": item})


def approve_and_close(claim_id: str, tool_context: ToolContext) -> str:
    """Approve a reviewed claim and end the review."""
    tool_context.actions.escalate = True  # ends the LoopAgent
    tool_context.actions.skip_summarization = True  # no model call after it
    result = f"claim {claim_id} approved"
    s.tool("approve_and_close", {"claim_id": claim_id}, result)
    return result


def handed_over(tool, args, tool_context, tool_response):
    """ADK's transfer tool, as it ran: a handoff of the request, not one of its tool calls."""
    if tool.name == "transfer_to_agent":
        s.runs[-1]["handoffs"].append({"from": tool_context.agent_name, "to": args["agent_name"]})


def agent(name: str, instruction: str, tools: list, **extra) -> LlmAgent:
    return counting_agent(name, instruction, tools, CALLS, after_tool_callback=handed_over, **extra)


def pipeline() -> SequentialAgent:
    payout_officer = agent(
        "payout_officer",
        "You pay out claims and close accounts.",
        [TOOLS["issue_payout"], TOOLS["delete_account"]],
        description="Pays out claims and closes customer accounts.",
    )
    return SequentialAgent(
        name="claims_pipeline",
        description="Takes in a claim, then assesses it.",
        sub_agents=[
            agent("intake_clerk", "You note the customer's policy.", [TOOLS["lookup_policy"]]),
            agent(
                "claims_assessor",
                "You file claims; send payouts and account closures to payout_officer.",
                [TOOLS["file_claim"]],
                sub_agents=[payout_officer],
            ),
        ],
    )


def review_loop() -> LoopAgent:
    """A LoopAgent of a drafter and a reviewer, repeated until the reviewer's tool ends it (at most 3 rounds)."""
    return LoopAgent(
        name="claims_review_loop",
        description="Drafts and reviews a claim until it is approved.",
        max_iterations=3,
        sub_agents=[
            agent("claims_drafter", "You draft the claim; appraise damaged items.", [appraise_damage]),
            agent("claims_reviewer", "You review the draft; approve it when complete.", [approve_and_close]),
        ],
    )


def transfer() -> dict:
    return tool("transfer_to_agent", {"agent_name": "payout_officer"})


NOTED = text("Policy P-310 is active: home contents, cover 5000 EUR.")
SCENARIOS = {
    "claim_pipeline": (
        ["My laptop was stolen; policy P-310. Please file a claim for 1200 euros."],
        [
            tool("lookup_policy", {"policy_id": "P-310"}),
            NOTED,
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            text("Claim CL-4471 is filed on policy P-310 for 1200 EUR."),
        ],
    ),
    "transfer_payout_error": (
        ["File a 1200 euro claim on P-310 and pay it out right away."],
        [
            tool("lookup_policy", {"policy_id": "P-310"}),
            NOTED,
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            transfer(),
            tool("issue_payout", {"claim_id": "CL-4471"}),
            text("Claim CL-4471 is filed, but the payout could not be made: the payout system is locked."),
        ],
    ),
    "close_account": (
        ["Close my account please, customer u-981."],
        [
            text("No policy is involved; the customer wants account u-981 closed."),
            transfer(),
            tool("delete_account", {"user_id": "u-981"}),
            text("Account u-981 has been closed."),
        ],
    ),
    "review_loop": (
        ["Review my laptop claim CL-4471 until it can be approved."],
        [
            tool("appraise_damage", {"item": "laptop"}),
            text("Draft: laptop, replacement value 1200 EUR."),
            text("The draft needs the policy number."),
            text("Draft: laptop, replacement value 1200 EUR, policy P-310."),
            tool("approve_and_close", {"claim_id": "CL-4471"}),
        ],
    ),
    "assessor_failure": (
        ["Check policy P-310 and file a 1200 euro claim."],
        [
            tool("lookup_policy", {"policy_id": "P-310"}),
            NOTED,
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            failure(500, "model backend down"),
        ],
    ),
}


async def serve(request: str) -> None:
    """One user request through an InMemoryRunner at its root agent; records its ground truth."""
    root = review_loop() if s.name == "review_loop" else pipeline()
    await workflow_request(s, root, request, "claims", CALLS, lacks=LACKS if DEFAULT_SETTINGS else None)


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await serve(request)
        provider.force_flush()


asyncio.run(main())
