"""An Agno `Team` in coordinate mode (a leader that delegates tasks to member agents with tools and composes
the answer from theirs) traced by openinference-instrumentation-agno.

`grid_coordinator` delegates with the Team's own `delegate_task_to_member` tool (`member_id` names the member)
to `field_technician` (read_meter, check_outage, open_repair) and `billing_clerk` (waive_late_fee, which fails,
delete_account); each member's answer comes back to the leader as the tool's result, and the leader writes the
answer. The model is `OpenAIChat(base_url=...)` with the client's retries off and an httpx client whose
request hook counts the model calls (one request to the scripted model each). Each request runs inside a
`handle_request` span.

The ground truth is the request run: the user's request, the answer the Team returned, every agent's model
calls (the requests the model clients sent), the members' tool calls as the tools really ran them, and each
delegation as a handoff (leader -> `member_id`), never a tool call of the request. In `clerk_failure` the
model backend fails inside billing_clerk's turn.

Run as ../agno-team-broadcast-openinference/capture.py (MODE="broadcast"), the Team is in broadcast mode instead:
the leader's one `delegate_task_to_members` call (a task, no member named) runs every member in turn (Agno's
sync `run`), and the leader composes the answer from all of theirs; each member that acted is a handoff. Run as
../agno-team-broadcast-traceloop/capture.py (MODE="broadcast", INSTRUMENTATION="openllmetry"), the broadcast Team
is traced by OpenLLMetry (opentelemetry-instrumentation-agno + opentelemetry-instrumentation-openai) instead.
"""

import os

os.environ.setdefault("AGNO_TELEMETRY", "false")  # no anonymous usage pings

import httpx
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.team import Team
from agno.team.mode import TeamMode
from client import Scenario, each, failure, text, tool
from grid_desk import grid_tools
from telemetry import flush, traced


def openinference() -> list:
    from openinference.instrumentation.agno import AgnoInstrumentor

    return [AgnoInstrumentor()]


def openllmetry() -> list:
    from opentelemetry.instrumentation.agno import AgnoInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return [AgnoInstrumentor(), OpenAIInstrumentor()]


tracer = traced("grid-team", openllmetry if globals().get("INSTRUMENTATION") == "openllmetry" else openinference)

S: Scenario  # the scenario being captured; the tools record into its request run
MODE = TeamMode(globals().get("MODE", "coordinate"))
LEADER = "grid_coordinator" if MODE is TeamMode.coordinate else "grid_broadcaster"
MODEL_CALLS: list[str] = []  # the requests sent to the model in the current scenario
TOOLS = grid_tools(lambda: S)
HTTP = httpx.Client(event_hooks={"request": [lambda request: MODEL_CALLS.append(str(request.url))]})


def model() -> OpenAIChat:
    return OpenAIChat(id="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0, http_client=HTTP)


def member(name: str, role: str, tools: list[str]) -> Agent:
    return Agent(id=name, name=name, role=role, model=model(), tools=[TOOLS[t] for t in tools], telemetry=False)


def team() -> Team:
    return Team(
        name=LEADER,
        mode=MODE,
        model=model(),
        members=[
            member(
                "field_technician",
                "Reads meters, checks the grid and opens repairs.",
                ["read_meter", "check_outage", "open_repair"],
            ),
            member("billing_clerk", "Handles fees and closes accounts.", ["waive_late_fee", "delete_account"]),
        ],
        instructions="Delegate each part of the customer's request to the member who handles it, then answer.",
        telemetry=False,
    )


def run(request: str) -> None:
    truth = S.run(LEADER, request)
    truth["handoffs"] = []
    MODEL_CALLS.clear()
    leader = team()
    result = leader.run(request)
    members = [(m.agent_name, m.status.value) for m in result.member_responses or []]
    # every member that ran, in the order it ran, was handed a task by the leader's delegation tool (a failed
    # Team run does not return the tool call that delegated)
    truth["handoffs"] = [{"from": LEADER, "to": name} for name, _ in members]
    failed = result.status.value == "ERROR" or any(status == "ERROR" for _, status in members)
    print(f"   team status {result.status.value}, members {members}, content {result.content!r}")
    S.finish(None if failed else result.content, "error" if failed else "ok", len(MODEL_CALLS))
    note = (
        "The request run is the Team's, with every agent's model and tool calls; members that acted (status): "
        + ", ".join(f"{name} ({status})" for name, status in members)
        + ". Each delegation is a handoff; each agent's own run is also reported, nested."
    )
    if failed:
        note += f" A model call failed; the Team reported {result.status.value} with content {result.content!r}."
    truth.update(nested_runs_allowed=True, note=note)


def delegate(member_id: str, task: str) -> dict:
    return tool("delegate_task_to_member", {"member_id": member_id, "task": task})


COORDINATE = {
    "repair_opened": (
        "The display of my meter M-77 is blank. Please send someone.",
        [
            delegate("field_technician", "Read meter M-77 and open a repair job for its blank display."),
            tool("read_meter", {"meter_id": "M-77"}),
            tool("open_repair", {"meter_id": "M-77", "fault": "blank display"}),
            text("Meter M-77 last read 4312 kWh; repair job RJ-5081 is open."),
            text("A technician is on the way: repair job RJ-5081 is open for meter M-77."),
        ],
    ),
    "outage_then_fee_refused": (
        "There was a power cut at 75011 last month, so I paid late. Waive the late fee on invoice INV-9.",
        [
            delegate("field_technician", "Check whether postcode 75011 had a power cut."),
            tool("check_outage", {"postcode": "75011"}),
            text("No outage around 75011 recently; the last cut was 3 weeks ago."),
            delegate("billing_clerk", "Waive the late-payment fee on invoice INV-9."),
            tool("waive_late_fee", {"invoice_id": "INV-9"}),
            text("The late fee on INV-9 could not be waived: the billing ledger is sealed."),
            text(
                "The last cut at 75011 was 3 weeks ago, and the late fee on INV-9 cannot be waived right now: "
                "the billing ledger is sealed."
            ),
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
    "clerk_failure": (
        "Waive the late fee on invoice INV-9 please.",
        [
            delegate("billing_clerk", "Waive the late-payment fee on invoice INV-9."),
            failure(500, "model backend unavailable"),
        ],
    ),
}


def broadcast(task: str) -> dict:
    return tool("delegate_task_to_members", {"task": task})


BROADCAST = {
    "outage_checked": (
        "Is there a power cut around 75011? My lights keep flickering.",
        [
            broadcast("Check for a power cut around postcode 75011 and anything the customer owes."),
            tool("check_outage", {"postcode": "75011"}),
            text("No outage around 75011; the last cut was 3 weeks ago."),
            text("Nothing owed on this account."),
            text("There is no power cut around 75011 (the last one was 3 weeks ago), and your account is clear."),
        ],
    ),
    "survey_and_fee_refused": (
        "My meter M-77 went dark and I paid invoice INV-9 late because of it. Read it and waive the late fee.",
        [
            broadcast("Read meter M-77 and waive the late fee on invoice INV-9."),
            tool("read_meter", {"meter_id": "M-77"}),
            text("Meter M-77 last read 4312 kWh, 2 days ago."),
            tool("waive_late_fee", {"invoice_id": "INV-9"}),
            text("The late fee on INV-9 could not be waived: the billing ledger is sealed."),
            text("Meter M-77 reads 4312 kWh. The late fee on INV-9 cannot be waived right now: the ledger is sealed."),
        ],
    ),
    "close_account": (
        "Take a last reading of M-77 and close my account u-318, I am moving out.",
        [
            broadcast("Take a final reading of meter M-77 and close the account of customer u-318."),
            tool("read_meter", {"meter_id": "M-77"}),
            text("Final reading of M-77: 4312 kWh."),
            tool("delete_account", {"user_id": "u-318"}),
            text("Account u-318 deleted."),
            text("Final reading of M-77: 4312 kWh. Your account u-318 has been closed."),
        ],
    ),
    "clerk_failure": (
        "Read my meter M-77 and tell me what I owe.",
        [
            broadcast("Read meter M-77 and report what the customer owes."),
            tool("read_meter", {"meter_id": "M-77"}),
            text("Meter M-77 last read 4312 kWh, 2 days ago."),
            failure(500, "model backend unavailable"),
        ],
    ),
}
SCENARIOS = COORDINATE if MODE is TeamMode.coordinate else BROADCAST

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run(request)
    flush()
