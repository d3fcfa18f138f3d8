"""A CrewAI crew whose lead agent delegates to coworkers (`allow_delegation=True`, sequential process), traced by
openinference-instrumentation-crewai for the crew, task, agent and tool spans and openinference-instrumentation-openai
for the model calls (CrewAI 1.x sends `openai/<model>` to its native OpenAI provider, the openai SDK).

The crew settles insurance claims: `claims_coordinator` owns the request's one task and delegates with CrewAI's own
`delegate_work_to_coworker` tool (the coworker named in its `coworker` argument) to `policy_examiner`
(lookup_policy, file_claim) or `settlement_clerk` (issue_payout, which fails, delete_account), the claims desk's
tools of `../claims.py`, then answers. Each request runs inside a `handle_request` span.

The ground truth is the request run of the crew kickoff: the user's request, the crew's answer, every agent's model
calls (CrewAI's own LLMCallStartedEvent), the coworkers' tool calls as the tools ran them, and each delegation as a
handoff (coordinator -> coworker, from an after_tool_call hook, `crew_ledger.py`). In `examiner_failure` the model
backend fails inside the policy examiner's turn, and the kickoff raises.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from claims import desk_tools
from client import Scenario, each, failure, text, tool
from crew_ledger import watch
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool as crew_tool
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from telemetry import flush, traced

tracer = traced("claims-crew", lambda: [CrewAIInstrumentor(), OpenAIInstrumentor()])
S: Scenario  # the scenario being captured; the tools record into its request run
LEAD = "claims_coordinator"
LEDGER = watch()  # CrewAI's own record of the request being captured
TOOLS = {name: crew_tool(name)(f) for name, f in desk_tools(lambda: S).items()}


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)


def agent(role: str, tools: list, **options) -> Agent:
    return Agent(role=role, goal="Settle claims", backstory=f"You are the {role}.", llm=llm(), tools=tools, **options)


def run_crew(request: str) -> None:
    """One crew kickoff with its ground truth."""
    request_run = S.run(LEAD, request)
    LEDGER.start(request_run)
    lead = agent(LEAD, [], allow_delegation=True)
    examiner = agent("policy_examiner", [TOOLS["lookup_policy"], TOOLS["file_claim"]])
    clerk = agent("settlement_clerk", [TOOLS["issue_payout"], TOOLS["delete_account"]])
    task = Task(description="{request}", expected_output="A short answer for the policyholder.", agent=lead)
    crew = Crew(agents=[lead, examiner, clerk], tasks=[task])
    try:
        output, status = crew.kickoff(inputs={"request": request}).raw, "ok"
    except Exception as exc:
        print(f"   crew failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    S.finish(output, status, LEDGER.settle())
    request_run.update(
        nested_runs_allowed=True,
        note="The request run is the crew kickoff with every agent's model and tool calls; the coordinator's "
        "delegation tool calls are handoffs. Model calls per agent: "
        + ", ".join(f"{role} {n}" for role, n in LEDGER.llm_calls.items())
        + ". Each agent's own run is also reported, nested: "
        + "; ".join(LEDGER.agent_runs(LEAD))
        + ".",
    )


def delegate(coworker: str, task: str) -> dict:
    return tool(
        "delegate_work_to_coworker", {"task": task, "context": "The policyholder's request.", "coworker": coworker}
    )


SCENARIOS = {
    "claim_filed": (
        "My laptop was stolen; policy P-310. Please file a claim for 1200 euros.",
        [
            delegate("policy_examiner", "Look up policy P-310 and file a 1200 EUR claim on it."),
            tool("lookup_policy", {"policy_id": "P-310"}),
            tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
            text("Claim CL-4471 is filed on P-310 for 1200 EUR."),
            text("Your claim CL-4471 on policy P-310 is filed for 1200 EUR."),
        ],
    ),
    "payout_refused": (
        "Pay out my approved claim CL-4471 now.",
        [
            delegate("settlement_clerk", "Pay out the approved claim CL-4471."),
            tool("issue_payout", {"claim_id": "CL-4471"}),
            text("The payout of CL-4471 failed: the payout system is locked for audit."),
            text("Sorry, claim CL-4471 could not be paid out: the payout system is locked for an audit."),
        ],
    ),
    "close_account": (
        "Close my account please, customer u-981.",
        [
            delegate("settlement_clerk", "Delete the account of customer u-981."),
            tool("delete_account", {"user_id": "u-981"}),
            text("Account u-981 deleted."),
            text("Your account u-981 has been closed."),
        ],
    ),
    "examiner_failure": (
        "Check policy P-310 for me.",
        [
            delegate("policy_examiner", "Look up policy P-310."),
            tool("lookup_policy", {"policy_id": "P-310"}),
            failure(500, "model backend down"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run_crew(request)
    flush()
