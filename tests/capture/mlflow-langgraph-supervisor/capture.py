"""MLflow Tracing (`mlflow.langchain.autolog()`, default span schema) on a LangGraph supervisor
(`langgraph_supervisor.create_supervisor`) over two `create_react_agent` workers of an insurance-claims desk.

policy_clerk (lookup_policy, file_claim) and payout_desk (issue_payout, which fails, and delete_account), the
tools of `claims.py`, run on `ChatOpenAI` (Chat Completions against OPENAI_BASE_URL) with a `ToolNode` that turns a
raising tool into an error message. claims_supervisor hands work to them with handoff tools of its own names
(`pass_to_policy_clerk`, `hand_over_payouts`, made with `create_handoff_tool`), and each worker hands control back
(the library adds the `transfer_back_to_supervisor` messages itself, without a model call). MLflow exports over
OTLP because OTEL_EXPORTER_OTLP_ENDPOINT is set, through the service's own TracerProvider
(MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false, `mlflow.tracing.enable()` at start-up), so each request's
`handle_request` span is the trace's root.

The ground truth is the request run of the supervisor graph: the user's request, the supervisor's last answer,
every agent's model calls (counted by a callback on each agent's model) and tool calls (recorded by the tools as
they ran), and the handoffs, read from the graph's last state (the handoff tool messages the library marks with
their destination, and its handoff-back messages). In `payout_failure` the model backend fails during
payout_desk's turn: the graph raises, and the request failed with no answer.
"""

import os

os.environ["MLFLOW_USE_DEFAULT_TRACER_PROVIDER"] = "false"

import mlflow
from claims import desk_tools, each_request
from client import Scenario, failure, text, tool
from langchain_core.tools import tool as lc_tool
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from supervisor_desk import Desk

provider = TracerProvider(resource=Resource.create({"service.name": "claims-service"}))
trace.set_tracer_provider(provider)
mlflow.tracing.enable()  # MLflow joins the provider now, before the service's first span
mlflow.langchain.autolog()
tracer = trace.get_tracer("claims-service")

s: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = {name: lc_tool(f) for name, f in desk_tools(lambda: s).items()}
desk = Desk(
    "claims_supervisor",
    {
        "policy_clerk": ([TOOLS["lookup_policy"], TOOLS["file_claim"]], "You look up policies and file claims."),
        "payout_desk": ([TOOLS["issue_payout"], TOOLS["delete_account"]], "You pay out claims and close accounts."),
    },
    {
        "pass_to_policy_clerk": ("policy_clerk", "Pass the customer to the policy clerk."),
        "hand_over_payouts": ("payout_desk", "Hand payouts and closures to payouts."),
    },
    "You route insurance requests to policy_clerk or payout_desk, then answer the customer.",
)


TO_CLERK = tool("pass_to_policy_clerk", {})
TO_PAYOUTS = tool("hand_over_payouts", {})
SCENARIOS = {
    "claim_filed": (
        ["My laptop was stolen; policy P-310. Please file a claim for 1200 euros."],
        [
            TO_CLERK,
            tool("lookup_policy", {"policy_id": "P-310"}),
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            text("Claim CL-4471 is filed on P-310 for 1200 EUR."),
            text("Your claim CL-4471 on policy P-310 is filed for 1200 EUR."),
        ],
    ),
    "payout_error": (
        ["File a 1200 euro claim on P-310 and pay it out right away."],
        [
            TO_CLERK,
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            text("Claim CL-4471 is filed on P-310 for 1200 EUR."),
            TO_PAYOUTS,
            tool("issue_payout", {"claim_id": "CL-4471"}),
            text("I could not pay out CL-4471: the payout system is locked for audit."),
            text("Claim CL-4471 is filed, but its payout failed: the payout system is locked for audit."),
        ],
    ),
    "close_account": (
        ["I have sold the house; delete my customer account k-208."],
        [
            TO_PAYOUTS,
            tool("delete_account", {"user_id": "k-208"}),
            text("Account k-208 is deleted."),
            text("Your customer account k-208 has been deleted."),
        ],
    ),
    "payout_failure": (
        ["Pay out my claim CL-4471."],
        [TO_PAYOUTS, failure(500, "model backend unavailable")],
    ),
}

for s, request in each_request(SCENARIOS):  # s: the global the tools record into
    with tracer.start_as_current_span("handle_request"):
        desk.serve(s, request)
    provider.force_flush()
