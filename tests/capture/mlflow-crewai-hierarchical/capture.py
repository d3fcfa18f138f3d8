"""MLflow Tracing (`mlflow.crewai.autolog()`, default span schema) on a hierarchical CrewAI crew
(`Process.hierarchical`, a manager on `manager_llm`) of an energy supplier, exported over OTLP.

The manager ("Crew Manager", the agent CrewAI creates for the hierarchical process) delegates the request's one
task with CrewAI's own delegation tool (the coworker named in its `coworker` argument) to `tariff_advisor`
(read_meter, switch_tariff) or `accounts_keeper` (credit_overcharge, which fails, delete_account), the tools of
`energy.py`, then answers. The LLMs are `LLM("openai/gpt-4o-mini", base_url)` on CrewAI's native OpenAI provider.
CrewAI 1.15 runs agents on its flow-based executor and calls the model through its native provider, neither of which
`mlflow.crewai.autolog()` wraps (it traces the crew, the task and each agent), so `mlflow.openai.autolog()` is on
too, as MLflow users combine autologgers, and traces each chat completion. MLflow exports over OTLP because
OTEL_EXPORTER_OTLP_ENDPOINT is set; with MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false
it adds its exporting processor to the service's own TracerProvider (`mlflow.tracing.enable()` at start-up), so
each request's `handle_request` span is the trace's root.

The ground truth is the request run of the crew kickoff: the user's request, the crew's answer, every agent's
model calls (CrewAI's own LLMCallStartedEvent), the workers' tool calls as the tools ran them, and each
delegation as a handoff (manager -> worker, from an after_tool_call hook). In `advisor_failure` the model backend
fails inside the advisor's turn, and the kickoff raises.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt
os.environ["MLFLOW_USE_DEFAULT_TRACER_PROVIDER"] = "false"

import mlflow
from client import Scenario, each, failure, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool as crew_tool
from energy import FUNCTIONS
from hotel import recorded_tools
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

provider = TracerProvider(resource=Resource.create({"service.name": "energy-crew"}))
trace.set_tracer_provider(provider)
mlflow.tracing.enable()  # MLflow joins the provider now, before the service's first span
mlflow.crewai.autolog()
mlflow.openai.autolog()  # the model calls, which the native OpenAI provider makes outside what crewai autolog wraps
tracer = trace.get_tracer("energy-crew")

S: Scenario  # the scenario being captured; the tools record into its request run
MANAGER = "Crew Manager"  # the role CrewAI gives the manager agent it creates
LEDGER = watch()  # CrewAI's own record of the request being captured
TOOLS = {name: crew_tool(name)(f) for name, f in recorded_tools(FUNCTIONS, lambda: S).items()}


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)


def worker(role: str, tools: list) -> Agent:
    return Agent(role=role, goal="Serve energy customers", backstory=f"You are the {role}.", llm=llm(), tools=tools)


def run_crew(request: str) -> None:
    """One hierarchical crew kickoff with its ground truth."""
    workers = [
        worker("tariff_advisor", [TOOLS["read_meter"], TOOLS["switch_tariff"]]),
        worker("accounts_keeper", [TOOLS["credit_overcharge"], TOOLS["delete_account"]]),
    ]
    task = Task(description="{request}", expected_output="A short answer for the customer.")
    crew = Crew(agents=workers, tasks=[task], process=Process.hierarchical, manager_llm=llm())
    LEDGER.kickoff(S, crew, request, MANAGER, "the manager's")


def delegate(coworker: str, task: str) -> dict:
    return tool("delegate_work_to_coworker", {"task": task, "context": "The customer's request.", "coworker": coworker})


SCENARIOS = {
    "tariff_switched": (
        "Read meter M-7 and put it on the green night plan.",
        [
            delegate("tariff_advisor", "Read meter M-7 and move it to the green-night plan."),
            tool("read_meter", {"meter_id": "M-7"}),
            tool("switch_tariff", {"meter_id": "M-7", "plan": "green-night"}),
            text("M-7 reads 4312 kWh; it moves to green-night on the 1st of next month."),
            text("Meter M-7 reads 4312 kWh and moves to the green night plan on the 1st of next month."),
        ],
    ),
    "credit_refused": (
        "You overcharged me 64 euros in October, credit it back.",
        [
            delegate("accounts_keeper", "Credit the customer's 64 EUR October overcharge."),
            tool("credit_overcharge", {"amount": 64}),
            text("The 64 EUR credit could not be made: the credit window has closed."),
            text("Sorry, the 64 EUR could not be credited back: the credit window has closed."),
        ],
    ),
    "account_wiped": (
        "I am moving abroad; wipe my customer account e-512.",
        [
            delegate("accounts_keeper", "Delete the account of customer e-512."),
            tool("delete_account", {"user_id": "e-512"}),
            text("Account e-512 deleted."),
            text("Your customer account e-512 has been wiped."),
        ],
    ),
    "advisor_failure": (
        "What does meter M-9 read?",
        [
            delegate("tariff_advisor", "Read meter M-9."),
            tool("read_meter", {"meter_id": "M-9"}),
            failure(503, "model backend overloaded"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run_crew(request)
    provider.force_flush()
