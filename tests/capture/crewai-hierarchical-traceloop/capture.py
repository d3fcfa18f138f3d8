"""A hierarchical CrewAI crew (`Process.hierarchical`, a manager on `manager_llm`) traced by OpenLLMetry:
Traceloop's opentelemetry-instrumentation-crewai for the crew, task and agent spans and its
opentelemetry-instrumentation-openai for the model calls (CrewAI 1.x sends `openai/<model>` to its native OpenAI
provider, the openai SDK), content on (OpenLLMetry's default).

The manager ("Crew Manager", the agent CrewAI creates for the hierarchical process) delegates the request's one
task with CrewAI's own `delegate_work_to_coworker` tool (the coworker named in its `coworker` argument) to
`meter_technician` (read_meter, open_repair) or `billing_clerk` (waive_late_fee, which fails, delete_account),
then answers. Each request runs inside a `handle_request` span.

The ground truth is the request run of the crew kickoff: the user's request, the crew's answer, every agent's
model calls (CrewAI's own LLMCallStartedEvent), the workers' tool calls as the tools ran them, and each
delegation as a handoff (manager -> worker, from an after_tool_call hook). In `technician_failure` the model
backend fails inside the technician's turn, and the kickoff raises.

Run as ../crewai-hierarchical-openlit/capture.py (INSTRUMENTATION="openlit"), the same requests are traced by
OpenLIT (`openlit.init`, its CrewAI and OpenAI instrumentations) instead; `telemetry.py` sets up either.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from client import Scenario, each, failure, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool as crew_tool
from grid_desk import grid_tools
from telemetry import flush, traced


def openllmetry() -> list:
    from opentelemetry.instrumentation.crewai import CrewAIInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return [CrewAIInstrumentor(), OpenAIInstrumentor()]


tracer = traced("grid-crew", None if globals().get("INSTRUMENTATION") == "openlit" else openllmetry)

S: Scenario  # the scenario being captured; the tools record into its request run
MANAGER = "Crew Manager"  # the role CrewAI gives the manager agent it creates
LACKS_IF_FAILED = globals().get("LACKS_IF_FAILED")  # set by a capture whose trace carries less when a request fails
LEDGER = watch()  # CrewAI's own record of the request being captured
TOOLS = {name: crew_tool(name)(function) for name, function in grid_tools(lambda: S).items()}


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)


def worker(role: str, tools: list[str]) -> Agent:
    return Agent(
        role=role,
        goal="Serve grid customers",
        backstory=f"You are the {role}.",
        llm=llm(),
        tools=[TOOLS[t] for t in tools],
    )


def run_crew(request: str) -> None:
    """One hierarchical crew kickoff with its ground truth."""
    workers = [
        worker("meter_technician", ["read_meter", "open_repair"]),
        worker("billing_clerk", ["waive_late_fee", "delete_account"]),
    ]
    task = Task(description="{request}", expected_output="A short answer for the customer.")
    crew = Crew(agents=workers, tasks=[task], process=Process.hierarchical, manager_llm=llm())
    LEDGER.kickoff(S, crew, request, MANAGER, "the manager's", LACKS_IF_FAILED)


def delegate(coworker: str, task: str) -> dict:
    return tool("delegate_work_to_coworker", {"task": task, "context": "The customer's request.", "coworker": coworker})


SCENARIOS = {
    "repair_opened": (
        "The display of my meter M-77 is blank. Please send someone.",
        [
            delegate("meter_technician", "Read meter M-77 and open a repair job for its blank display."),
            tool("read_meter", {"meter_id": "M-77"}),
            tool("open_repair", {"meter_id": "M-77", "fault": "blank display"}),
            text("Meter M-77 last read 4312 kWh; repair job RJ-5081 is open."),
            text("A technician is on the way: repair job RJ-5081 is open for meter M-77."),
        ],
    ),
    "fee_refused": (
        "Waive the late fee on invoice INV-9, the bill was late because of a power cut.",
        [
            delegate("billing_clerk", "Waive the late-payment fee on invoice INV-9."),
            tool("waive_late_fee", {"invoice_id": "INV-9"}),
            text("The late fee on INV-9 could not be waived: the billing ledger is sealed."),
            text("Sorry, the late fee on INV-9 cannot be waived right now: the billing ledger is sealed."),
        ],
    ),
    "close_account": (
        "I am moving out; please close my account u-318.",
        [
            delegate("billing_clerk", "Delete the account of customer u-318."),
            tool("delete_account", {"user_id": "u-318"}),
            text("Account u-318 deleted."),
            text("Your account u-318 has been closed."),
        ],
    ),
    "technician_failure": (
        "What does my meter M-77 read?",
        [
            delegate("meter_technician", "Read meter M-77."),
            tool("read_meter", {"meter_id": "M-77"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run_crew(request)
    flush()
