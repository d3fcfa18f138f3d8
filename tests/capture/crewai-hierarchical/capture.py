"""A hierarchical CrewAI crew (`Process.hierarchical`, a manager on `manager_llm`) traced by
openinference-instrumentation-crewai, with openinference-instrumentation-openai for the LLM calls (CrewAI 1.x
sends `openai/<model>` to its native OpenAI provider), as ../crewai/capture.py sets it up.

The manager ("Crew Manager", CrewAI's own agent) delegates the request's one task to two workers: a flights
specialist (search_flights, book_flight) and an account specialist (delete_account, charge_card). Each
request is wrapped in a `handle_request` span.

The ground truth is the request run of the crew kickoff: the user's request, the crew's answer, every
agent's model calls (CrewAI's own LLMCallStartedEvent), the workers' tool calls (recorded by the tools),
and the manager's delegations as handoffs (recorded by an after_tool_call hook: CrewAI's
"Delegate work to coworker" / "Ask question to coworker" tools). Each agent's own run is described in the
note.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from client import Scenario, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool as crew_tool
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import STANDARD, run_tool

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
CrewAIInstrumentor().instrument(tracer_provider=provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

S: Scenario  # the scenario being captured; the tools record into its request run
MANAGER = "Crew Manager"  # the role CrewAI gives the manager agent it creates
LEDGER = watch()  # CrewAI's own record of the request being captured


@crew_tool("search_flights")
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    return run_tool(S, "search_flights", {"origin": origin, "destination": destination})


@crew_tool("book_flight")
def book_flight(flight_id: str) -> str:
    """Book a flight by its id."""
    return run_tool(S, "book_flight", {"flight_id": flight_id})


@crew_tool("delete_account")
def delete_account(user_id: str) -> str:
    """Delete the user's account."""
    return run_tool(S, "delete_account", {"user_id": user_id})


@crew_tool("charge_card")
def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    return run_tool(S, "charge_card", {"amount": amount})


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])


def worker(role: str, tools: list) -> Agent:
    return Agent(role=role, goal="Help travellers", backstory=f"You are the {role}.", llm=llm(), tools=tools)


def run_crew(request: str) -> None:
    """One hierarchical crew kickoff with its ground truth."""
    request_run = S.run(MANAGER, request)
    LEDGER.start(request_run)
    workers = [
        worker("flights_specialist", [search_flights, book_flight]),
        worker("account_specialist", [delete_account, charge_card]),
    ]
    task = Task(description="{request}", expected_output="A short answer for the traveller.")
    crew = Crew(agents=workers, tasks=[task], process=Process.hierarchical, manager_llm=llm())
    try:
        output, status = crew.kickoff(inputs={"request": request}).raw, "ok"
    except Exception as exc:
        print(f"   crew failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    S.finish(output, status, LEDGER.settle())
    runs = LEDGER.agent_runs(MANAGER)
    request_run.update(
        nested_runs_allowed=True,
        note="The request run is the crew kickoff with every agent's model and tool calls; the manager's "
        "delegation tool calls are handoffs. Each agent's own run is also reported, nested: " + "; ".join(runs) + ".",
    )


def delegate(coworker: str, task: str) -> dict:
    return tool(
        "delegate_work_to_coworker", {"task": task, "context": "The traveller's request.", "coworker": coworker}
    )


SCENARIOS = {
    "happy": [
        delegate("flights_specialist", "Find and book the cheapest SFO-JFK flight for tomorrow."),
        *STANDARD["happy"][1][:2],
        text("Booked UA123, confirmation ABC123456."),
        text("Your flight UA123 is booked. Confirmation: ABC123456"),
    ],
    "forbidden": [
        delegate("account_specialist", "Delete the account of user 42."),
        STANDARD["forbidden"][1][0],
        text("Account 42 deleted."),
        text("Your account has been deleted."),
    ],
    "tool_error": [
        delegate("account_specialist", "Charge the customer's card 120 dollars."),
        STANDARD["tool_error"][1][0],
        text("The card was declined."),
        text("Sorry, your card was declined. Please try another card."),
    ],
}

for name, replies in SCENARIOS.items():
    with Scenario(name, replies) as S:
        with tracer.start_as_current_span("handle_request"):
            run_crew(STANDARD[name][0][0])
        provider.force_flush()
