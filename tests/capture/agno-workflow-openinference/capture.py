"""An Agno `Workflow` of agent steps (two steps in sequence, then a `Router` choosing the third) traced by
openinference-instrumentation-agno.

`outage_pipeline` runs `fault_intake` (read_meter), then `grid_surveyor` (check_outage), then a Router whose selector
(application code) reads the surveyor's answer and picks one step: `field_dispatch` (open_repair) when it asks for a
repair, else `billing_settler` (waive_late_fee, which fails, delete_account). Each step's agent gets the previous
step's answer. The model is `OpenAIChat(base_url=...)` with the client's retries off and an httpx client whose
request hook counts the model calls (one request to the scripted model each). Each request runs inside a
`handle_request` span.

The ground truth is the request run of the workflow, entered at its first agent: the user's request, the answer
the workflow returned (none when it failed), every agent's model calls, the tool calls as the tools really ran
them, and no handoff (moving from one step to the next, and the Router's pick, are the workflow's, as in the other
workflow captures). In `dispatch_failure` the model backend fails inside field_dispatch's turn, the routed step.
"""

import os

os.environ.setdefault("AGNO_TELEMETRY", "false")  # no anonymous usage pings

import httpx
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.workflow import Router, Step, StepInput, Workflow
from client import Scenario, failure, text, tool
from grid_desk import grid_tools
from telemetry import each_handled, traced


def openinference() -> list:
    from openinference.instrumentation.agno import AgnoInstrumentor

    return [AgnoInstrumentor()]


tracer = traced("outage-service", openinference)

S: Scenario  # the scenario being captured; the tools record into its request run
MODEL_CALLS: list[str] = []  # the requests sent to the model in the current scenario
TOOLS = grid_tools(lambda: S)
HTTP = httpx.Client(event_hooks={"request": [lambda request: MODEL_CALLS.append(str(request.url))]})


def step(name: str, instructions: str, tools: list[str]) -> Step:
    """A workflow step run by an agent of the same name with grid tools."""
    model = OpenAIChat(id="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0, http_client=HTTP)
    agent = Agent(
        id=name, name=name, model=model, instructions=instructions, tools=[TOOLS[t] for t in tools], telemetry=False
    )
    return Step(name=name, agent=agent)


def workflow() -> Workflow:
    dispatch = step("field_dispatch", "Open repair jobs for faulty meters and tell the customer.", ["open_repair"])
    billing = step(
        "billing_settler",
        "Settle fees and account closures and tell the customer.",
        ["waive_late_fee", "delete_account"],
    )

    def pick(step_input: StepInput) -> list[Step]:
        """The repair desk when the surveyor asks for a repair, else billing."""
        return [dispatch if "repair" in str(step_input.previous_step_content).lower() else billing]

    return Workflow(
        name="outage_pipeline",
        steps=[
            step("fault_intake", "Read the customer's meter when one is named and sum up the request.", ["read_meter"]),
            step(
                "grid_surveyor",
                "Check the grid at the customer's postcode; say whether a repair is needed.",
                ["check_outage"],
            ),
            Router(name="desk_router", selector=pick, choices=[dispatch, billing]),
        ],
        telemetry=False,
    )


def run(request: str) -> None:
    S.run("fault_intake", request)
    MODEL_CALLS.clear()
    result = workflow().run(request)
    steps = [(r.step_name, r.success) for r in result.step_results or [] if hasattr(r, "step_name")]
    failed = result.status.value == "ERROR" or any(not ok for _, ok in steps)
    print(f"   workflow status {result.status.value}, steps {steps}, content {str(result.content)[:100]!r}")
    S.finish(None if failed else result.content, "error" if failed else "ok", len(MODEL_CALLS))
    S.runs[-1].update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is the workflow's, with every step agent's model and tool calls; steps run "
        f"(success): {steps}; the Router's pick is the workflow's, no handoff."
        + (f" A model call failed; the workflow reported {result.status.value}." if failed else ""),
    )


SCENARIOS = {
    "repair_dispatched": (
        "The display of my meter M-77 is blank and the lights flicker at 75011. Please send someone.",
        [
            tool("read_meter", {"meter_id": "M-77"}),
            text("Meter M-77 last read 4312 kWh; its display is blank. Postcode 75011."),
            tool("check_outage", {"postcode": "75011"}),
            text("No outage at 75011, so the meter itself is at fault: open a repair for M-77."),
            tool("open_repair", {"meter_id": "M-77", "fault": "blank display"}),
            text("Repair job RJ-5081 is open for meter M-77; a technician will come to fix the blank display."),
        ],
    ),
    "fee_refused": (
        "I paid invoice INV-9 late because of a power cut at 75011. Waive the late fee.",
        [
            text("The customer asks to waive the late fee on invoice INV-9 after a power cut at 75011."),
            tool("check_outage", {"postcode": "75011"}),
            text("75011 has no outage now, the last cut was 3 weeks ago: a billing matter, the fee on INV-9."),
            tool("waive_late_fee", {"invoice_id": "INV-9"}),
            text("Sorry, the late fee on INV-9 cannot be waived right now: the billing ledger is sealed."),
        ],
    ),
    "close_account": (
        "Take a last reading of meter M-77 and close my account u-318, I am moving out.",
        [
            tool("read_meter", {"meter_id": "M-77"}),
            text("Final reading of M-77: 4312 kWh. The customer u-318 is moving out and wants the account closed."),
            text("Nothing on the grid to check: a billing matter, close account u-318."),
            tool("delete_account", {"user_id": "u-318"}),
            text("Your final reading is 4312 kWh and your account u-318 has been closed."),
        ],
    ),
    "dispatch_failure": (
        "My meter M-77 shows nothing at all, postcode 75011. Can someone fix it?",
        [
            tool("read_meter", {"meter_id": "M-77"}),
            text("Meter M-77 last read 4312 kWh and now shows nothing. Postcode 75011."),
            tool("check_outage", {"postcode": "75011"}),
            text("No outage at 75011: open a repair for meter M-77."),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for S, request in each_handled(SCENARIOS, tracer):  # noqa: B007 (S: the scenario the tools record into)
    run(request)
