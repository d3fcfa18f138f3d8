"""A CrewAI crew whose lead agent delegates to coworkers (`allow_delegation=True`, sequential process), traced by
OpenLLMetry: Traceloop's opentelemetry-instrumentation-crewai for the crew, task and agent spans and its
opentelemetry-instrumentation-openai for the model calls (CrewAI 1.x sends `openai/<model>` to its native
OpenAI provider, the openai SDK).

The crew ships containers: `dispatch_lead` owns the request's one task and delegates with CrewAI's own
`delegate_work_to_coworker` tool (the coworker named in its `coworker` argument) to `fleet_planner`
(track_container, book_slot) or `customs_clerk` (check_clearance, pay_duty, which fails, delete_account),
then answers. Each request runs inside a `handle_request` span.

The ground truth is the request run of the crew kickoff: the user's request, the crew's answer, every
agent's model calls (CrewAI's own LLMCallStartedEvent), the coworkers' tool calls as the tools ran them, and
each delegation as a handoff (lead -> coworker, from an after_tool_call hook). In `clerk_failure` the model
backend fails inside the customs clerk's turn, and the kickoff raises.

Run as ../crewai-delegation-traceloop-nocontent/capture.py (LACKS set, TRACELOOP_TRACE_CONTENT=false), the
same requests are captured with content off; each run lists in `lacks` what that trace cannot carry. Run as
../crewai-delegation-openlit/capture.py (INSTRUMENTATION="openlit"), they are traced by OpenLIT instead
(`telemetry.py` sets up either).
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from client import Scenario, each, failure, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool as crew_tool
from telemetry import flush, traced


def openllmetry() -> list:
    from opentelemetry.instrumentation.crewai import CrewAIInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return [CrewAIInstrumentor(), OpenAIInstrumentor()]


tracer = traced("freight-desk", None if globals().get("INSTRUMENTATION") == "openlit" else openllmetry)

S: Scenario  # the scenario being captured; the tools record into its request run
LEAD = "dispatch_lead"
LACKS = globals().get("LACKS")  # set by the content-off capture: what its trace cannot carry
LACKS_IF_FAILED = globals().get("LACKS_IF_FAILED")  # set by a capture whose trace carries less when a request fails
LEDGER = watch()  # CrewAI's own record of the request being captured


@crew_tool("track_container")
def track_container(container_id: str) -> str:
    """Where a shipping container is and when it arrives."""
    return S.ran("track_container", {"container_id": container_id}, f"{container_id}: arriving Rotterdam Thursday")


@crew_tool("book_slot")
def book_slot(container_id: str, port: str) -> str:
    """Book a berth slot for a container at a port."""
    return S.ran("book_slot", {"container_id": container_id, "port": port}, f"slot S-12 at {port} booked")


@crew_tool("check_clearance")
def check_clearance(container_id: str) -> str:
    """Customs clearance status of a container."""
    return S.ran("check_clearance", {"container_id": container_id}, f"{container_id}: duty of 410 EUR unpaid")


@crew_tool("pay_duty")
def pay_duty(container_id: str, amount: int) -> str:
    """Pay the customs duty of a container."""
    return S.ran("pay_duty", {"container_id": container_id, "amount": amount}, error="customs gateway refused")


@crew_tool("delete_account")
def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    return S.ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)


def agent(role: str, tools: list, **options) -> Agent:
    return Agent(role=role, goal="Move freight", backstory=f"You are the {role}.", llm=llm(), tools=tools, **options)


def run_crew(request: str) -> None:
    """One crew kickoff with its ground truth."""
    lead = agent(LEAD, [], allow_delegation=True)
    planner = agent("fleet_planner", [track_container, book_slot])
    clerk = agent("customs_clerk", [check_clearance, pay_duty, delete_account])
    task = Task(description="{request}", expected_output="A short answer for the shipper.", agent=lead)
    crew = Crew(agents=[lead, planner, clerk], tasks=[task])
    LEDGER.kickoff(S, crew, request, LEAD, "the lead's", LACKS_IF_FAILED, LACKS)


def delegate(coworker: str, task: str) -> dict:
    return tool("delegate_work_to_coworker", {"task": task, "context": "The shipper's request.", "coworker": coworker})


SCENARIOS = {
    "slot_booked": (
        "Where is container MSKU-7? Book it a berth slot on arrival.",
        [
            delegate("fleet_planner", "Track container MSKU-7 and book it a berth slot where it arrives."),
            tool("track_container", {"container_id": "MSKU-7"}),
            tool("book_slot", {"container_id": "MSKU-7", "port": "Rotterdam"}),
            text("MSKU-7 arrives in Rotterdam on Thursday; berth slot S-12 is booked."),
            text("Container MSKU-7 arrives in Rotterdam on Thursday and has berth slot S-12."),
        ],
    ),
    "duty_refused": (
        "Pay the 410 EUR customs duty on container MSKU-7.",
        [
            delegate("customs_clerk", "Pay the 410 EUR duty on container MSKU-7."),
            tool("pay_duty", {"container_id": "MSKU-7", "amount": 410}),
            text("The duty payment for MSKU-7 was refused by the customs gateway."),
            text("The customs gateway refused the 410 EUR duty payment for MSKU-7; please try again later."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            delegate("customs_clerk", "Delete the account of user 42."),
            tool("delete_account", {"user_id": "42"}),
            text("Account 42 deleted."),
            text("Your account 42 has been closed."),
        ],
    ),
    "clerk_failure": (
        "Has container MSKU-7 cleared customs?",
        [
            delegate("customs_clerk", "Check whether container MSKU-7 has cleared customs."),
            tool("check_clearance", {"container_id": "MSKU-7"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run_crew(request)
    flush()
