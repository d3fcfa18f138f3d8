"""The Langfuse Python SDK v3 (OTel-based) LangChain callback (`langfuse.langchain.CallbackHandler`) on a LangGraph
supervisor (`langgraph_supervisor.create_supervisor`) over two `create_react_agent` workers of an energy utility.

field_service (read_meter, book_engineer) and accounts_office (waive_late_fee, which fails, and delete_account),
the tools of `utility.py`, run on `ChatOpenAI` (Chat Completions against OPENAI_BASE_URL) with a `ToolNode` that
turns a raising tool into an error message. utility_coordinator hands work to them with handoff tools of its own
names (`dispatch_field_crew`, `refer_to_accounts`, made with `create_handoff_tool`), and each worker hands control
back (the library adds the `transfer_back_to_supervisor` messages itself, without a model call). The handler is
passed in the graph's run config, as Langfuse documents for LangGraph.

Langfuse adds its span processor to the service's TracerProvider (set before the client starts) and exports to
`{LANGFUSE_HOST}/api/public/otel/v1/traces`, here the harness (the keys are any value; no Langfuse server), so each
request's `handle_request` span and the handler's observations share one trace.

The ground truth is the request run of the supervisor graph: the user's request, the coordinator's last answer,
every agent's model calls (counted by a callback on each agent's model) and tool calls (recorded by the tools as
they ran), and the handoffs, read from the graph's last state (the handoff tool messages the library marks with
their destination, and its handoff-back messages). In `field_failure` the model backend fails during
field_service's turn: the graph raises, and the request failed with no answer.
"""

import os

os.environ["LANGFUSE_HOST"] = os.environ["LANGFUSE_BASE_URL"] = os.environ["CAPTURE_HARNESS_URL"]
os.environ["LANGFUSE_PUBLIC_KEY"] = "pk-lf-capture"
os.environ["LANGFUSE_SECRET_KEY"] = "sk-lf-capture"

from client import Scenario, each, failure, text, tool
from langchain_core.tools import tool as lc_tool
from langfuse import Langfuse
from langfuse.langchain import CallbackHandler
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from supervisor_desk import Desk
from utility import utility_tools

provider = TracerProvider(resource=Resource.create({"service.name": "utility-service"}))
trace.set_tracer_provider(provider)
langfuse = Langfuse()  # joins the service's provider with its exporting span processor
tracer = trace.get_tracer("utility-service")

s: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = {name: lc_tool(f) for name, f in utility_tools(lambda: s).items()}
desk = Desk(
    "utility_coordinator",
    {
        "field_service": ([TOOLS["read_meter"], TOOLS["book_engineer"]], "You read meters and book engineer visits."),
        "accounts_office": ([TOOLS["waive_late_fee"], TOOLS["delete_account"]], "You handle fees and close accounts."),
    },
    {
        "dispatch_field_crew": ("field_service", "Send meter work to field service."),
        "refer_to_accounts": ("accounts_office", "Refer billing and accounts questions."),
    },
    "You route energy customers to field_service or accounts_office, then answer the customer.",
    max_retries=0,
)


TO_FIELD = tool("dispatch_field_crew", {})
TO_ACCOUNTS = tool("refer_to_accounts", {})
SCENARIOS = {
    "engineer_booked": (
        "My meter M-41 is ticking loudly. Read it and get an engineer out on Thursday morning.",
        [
            TO_FIELD,
            tool("read_meter", {"meter_id": "M-41"}),
            tool("book_engineer", {"meter_id": "M-41", "slot": "Thursday 09:00"}),
            text("M-41 reads 48213 kWh; engineer visit EV-3391 is booked for Thursday 09:00."),
            text("Your meter M-41 reads 48213 kWh and an engineer comes on Thursday at 09:00 (job EV-3391)."),
        ],
    ),
    "fee_refused": (
        "Please drop the late fee on invoice INV-2207; I paid two days late because of the bank.",
        [
            TO_ACCOUNTS,
            tool("waive_late_fee", {"invoice_id": "INV-2207"}),
            text("The late fee on INV-2207 could not be waived: the fee ledger is sealed."),
            text("Sorry, the late fee on INV-2207 cannot be waived right now: the fee ledger is sealed."),
        ],
    ),
    "account_closed": (
        "I have moved to my partner's flat; close my energy account u-733.",
        [
            TO_ACCOUNTS,
            tool("delete_account", {"user_id": "u-733"}),
            text("Account u-733 is closed."),
            text("Your energy account u-733 has been closed."),
        ],
    ),
    "field_failure": (
        "What does meter M-41 read today?",
        [TO_FIELD, tool("read_meter", {"meter_id": "M-41"}), failure(500, "model backend unavailable")],
    ),
}

for s, request in each(SCENARIOS, nested_runs_allowed=True):  # s: the global the tools record into
    with tracer.start_as_current_span("handle_request"):
        desk.serve(s, request, config={"callbacks": [CallbackHandler()]})
    langfuse.flush()
    provider.force_flush()
