"""A CrewAI sequential crew of two agents with tools, no delegation, traced by OpenLIT (`openlit.init`, its
CrewAI and OpenAI instrumentations, message content on by default). CrewAI 1.x sends `openai/<model>` to its
native OpenAI provider, the openai SDK.

The crew serves energy customers with the tools of `../energy.py`: `meter_reader` (read_meter, outage_status)
works the first task, gathering the facts the request needs; `tariff_advisor` (switch_tariff,
credit_overcharge, which fails, estimate_bill, delete_account) works the second, whose context is the first
task's output, and its answer is the crew's. Neither agent may delegate. Each request runs inside a
`handle_request` span.

The ground truth is the request run of the crew kickoff: the user's request, the crew's answer, both agents'
model calls (CrewAI's own LLMCallStartedEvent) and tool calls as the tools ran them; the second task following
the first is the crew's fixed order, not a handoff. In `advisor_failure` the model backend fails inside the
advisor's turn and the kickoff raises.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

import energy
from client import Scenario, each, failure, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool as crew_tool
from telemetry import flush, traced

tracer = traced("energy-desk")

S: Scenario  # the scenario being captured; the tools record into its request run
READER = "meter_reader"
ADVISOR = "tariff_advisor"
LEDGER = watch()  # CrewAI's own record of the request being captured


def recorded(function):
    """`function` of energy.py as a CrewAI tool that records each real execution into the request run."""

    def run(**arguments):
        try:
            result = function(**arguments)
        except RuntimeError as exc:
            return S.ran(function.__name__, arguments, error=str(exc))
        return S.ran(function.__name__, arguments, result)

    run.__name__, run.__doc__, run.__annotations__ = function.__name__, function.__doc__, function.__annotations__
    return crew_tool(function.__name__)(run)


TOOLS = {name: recorded(function) for name, function in energy.FUNCTIONS.items()}


def agent(role: str, goal: str, tools: list[str]) -> Agent:
    return Agent(
        role=role,
        goal=goal,
        backstory=f"You are the {role} of an energy supplier.",
        llm=LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0),
        tools=[TOOLS[name] for name in tools],
        allow_delegation=False,
    )


def run_crew(request: str) -> None:
    """One crew kickoff with its ground truth."""
    request_run = S.run(READER, request)
    LEDGER.start(request_run)
    reader = agent(READER, "Gather the meter and outage facts a request needs", ["read_meter", "outage_status"])
    advisor = agent(
        ADVISOR,
        "Act on the customer's request",
        ["switch_tariff", "credit_overcharge", "estimate_bill", "delete_account"],
    )
    gather = Task(description="Gather the facts for: {request}", expected_output="The facts found.", agent=reader)
    act = Task(
        description="Act on the customer's request: {request}",
        expected_output="A short answer for the customer.",
        agent=advisor,
        context=[gather],
    )
    crew = Crew(agents=[reader, advisor], tasks=[gather, act], process=Process.sequential)
    try:
        output, status = crew.kickoff(inputs={"request": request}).raw, "ok"
    except Exception as exc:
        print(f"   crew failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    # OpenLIT writes no span for a crew's tools: their results stand only in the agent's next model request, and a
    # request that failed records no messages, so a failed run's trace lacks the last results.
    S.finish(output, status, LEDGER.settle(), lacks=["tool_results"] if status == "error" else None)
    request_run.update(
        nested_runs_allowed=True,
        note="The request run is the crew kickoff with both agents' model and tool calls, in task order; the "
        "second task taking the first's output as context is no handoff. Model calls per agent: "
        + ", ".join(f"{role} {n}" for role, n in LEDGER.llm_calls.items())
        + ".",
    )


SCENARIOS = {
    "tariff_switched": (
        "Read meter M-7 and put it on the green night plan.",
        [
            tool("read_meter", {"meter_id": "M-7"}),
            text("Meter M-7 reads 4312 kWh on 1 November."),
            tool("switch_tariff", {"meter_id": "M-7", "plan": "green-night"}),
            text("M-7 reads 4312 kWh and moves to the green-night plan on the 1st of next month."),
        ],
    ),
    "credit_refused": (
        "You overcharged me 64 euros on meter M-9 in October, credit it back.",
        [
            tool("read_meter", {"meter_id": "M-9"}),
            text("Meter M-9 read 881 kWh on 30 October."),
            tool("credit_overcharge", {"amount": 64}),
            text("I could not credit the 64 EUR: the credit window has closed."),
        ],
    ),
    "account_wiped": (
        "I am moving abroad; check there is no outage in 1010 and wipe my customer account e-512.",
        [
            tool("outage_status", {"postcode": "1010"}),
            text("There is no outage in 1010."),
            tool("delete_account", {"user_id": "e-512"}),
            text("There is no outage in 1010, and customer account e-512 has been wiped."),
        ],
    ),
    "advisor_failure": (
        "Meter M-9: what would its consumption cost me a month?",
        [
            tool("read_meter", {"meter_id": "M-9"}),
            text("Meter M-9 read 881 kWh on 30 October."),
            tool("estimate_bill", {"kwh": 881}),
            failure(503, "model backend overloaded"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run_crew(request)
    flush()
