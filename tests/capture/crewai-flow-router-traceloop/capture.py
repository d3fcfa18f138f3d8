"""A CrewAI `Flow` whose `@router` picks one of two crews from a triage crew's answer, traced by OpenLLMetry:
Traceloop's opentelemetry-instrumentation-crewai for the crew, task and agent spans and its
opentelemetry-instrumentation-openai for the model calls (CrewAI 1.x sends `openai/<model>` to its native OpenAI
provider, the openai SDK), content on (OpenLLMetry's default).

`GridRoutingFlow`'s `@start` step kicks off a triage crew (intake_officer, read_meter) whose answer begins with
the desk it routes to; its `@router` step returns `repair` or `billing` from that answer, and the matching
`@listen` step kicks off the repair crew (repair_planner, open_repair) or the billing crew (fees_clerk,
waive_late_fee, which fails, and delete_account) with the triage answer. The grid tools of `../grid_desk.py`.
Each request runs inside a `handle_request` span.

The ground truth is the request run of the flow kickoff: the user's request, the flow's answer (the routed crew's),
every agent's model calls (CrewAI's own LLMCallStartedEvent; retries are off) and tool calls as the tools ran
them. The flow's router, code and not an agent, chooses the next crew: no handoff. In `repair_failure` the model
backend fails inside the repair crew's turn and the kickoff raises.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from client import Scenario, each, failure, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Task
from crewai.flow.flow import Flow, listen, router, start
from crewai.tools import tool as crew_tool
from grid_desk import grid_tools
from opentelemetry.instrumentation.crewai import CrewAIInstrumentor
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from telemetry import flush, traced

tracer = traced("grid-flow", lambda: [CrewAIInstrumentor(), OpenAIInstrumentor()])

S: Scenario  # the scenario being captured; the tools record into its request run
ENTRY = "GridRoutingFlow"
LEDGER = watch()  # CrewAI's own record of the request being captured
TOOLS = {name: crew_tool(name)(function) for name, function in grid_tools(lambda: S).items()}


def crew(role: str, tools: list[str], description: str) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
    agent = Agent(
        role=role,
        goal="Serve grid customers",
        backstory=f"You are the {role}.",
        llm=llm,
        tools=[TOOLS[t] for t in tools],
    )
    return Crew(agents=[agent], tasks=[Task(description=description, expected_output="A short answer.", agent=agent)])


class GridRoutingFlow(Flow):
    """Triage, route to the repair or the billing crew, act."""

    @start()
    def triage(self) -> str:
        found = crew("intake_officer", ["read_meter"], "Say whether this goes to repair or billing: {request}")
        self.state["found"] = found.kickoff(inputs={"request": self.state["request"]}).raw
        return self.state["found"]

    @router(triage)
    def route(self, found: str) -> str:
        return "billing" if found.lower().startswith("billing") else "repair"

    @listen("repair")
    def repair_crew(self) -> str:
        desk = crew("repair_planner", ["open_repair"], "Act on the request ({request}); triage found: {found}")
        return desk.kickoff(inputs={"request": self.state["request"], "found": self.state["found"]}).raw

    @listen("billing")
    def billing_crew(self) -> str:
        desk = crew(
            "fees_clerk", ["waive_late_fee", "delete_account"], "Act on the request ({request}); triage found: {found}"
        )
        return desk.kickoff(inputs={"request": self.state["request"], "found": self.state["found"]}).raw


def run_flow(request: str) -> None:
    request_run = S.run(ENTRY, request)
    LEDGER.start(request_run)
    try:
        output, status = GridRoutingFlow().kickoff(inputs={"request": request}), "ok"
    except Exception as exc:
        print(f"   flow failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    S.finish(output, status, LEDGER.settle())
    request_run.update(
        nested_runs_allowed=True,
        note="The request run is the flow kickoff with every crew's model and tool calls; the flow's router, not "
        "an agent, picks the crew after triage. Model calls per agent: "
        + ", ".join(f"{role} {n}" for role, n in LEDGER.llm_calls.items())
        + ".",
    )


SCENARIOS = {
    "repair_routed": (
        "Meter M-77's display went blank this morning; please get it fixed.",
        [
            tool("read_meter", {"meter_id": "M-77"}),
            text("repair: meter M-77 shows a blank display."),
            tool("open_repair", {"meter_id": "M-77", "fault": "blank display"}),
            text("Repair job RJ-5081 is open for meter M-77; a technician will call you."),
        ],
    ),
    "fee_refused": (
        "Take the late fee off invoice INV-12, it was your error.",
        [
            text("billing: the customer disputes the late fee on INV-12."),
            tool("waive_late_fee", {"invoice_id": "INV-12"}),
            text("Sorry, the late fee on INV-12 cannot be waived: the billing ledger is sealed."),
        ],
    ),
    "account_closed": (
        "Close my grid account u-640, I have sold the house.",
        [
            text("billing: the customer wants account u-640 closed."),
            tool("delete_account", {"user_id": "u-640"}),
            text("Your grid account u-640 has been closed."),
        ],
    ),
    "repair_failure": (
        "Meter M-77 is buzzing loudly; send someone.",
        [
            tool("read_meter", {"meter_id": "M-77"}),
            text("repair: meter M-77 is buzzing."),
            failure(503, "model backend overloaded"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run_flow(request)
    flush()
