"""LangChain classic `AgentExecutor` agents (`create_tool_calling_agent`) where one agent is a tool of another,
traced by OpenLLMetry's `opentelemetry-instrumentation-langchain`.

outage_hotline has `escalate_to_field_service` (a tool function that invokes a second AgentExecutor,
field_service_planner, with the hotline's request and returns its output), tariff_quote and delete_account;
field_service_planner has meter_reading, open_fault_ticket and issue_credit_note (fails: "billing engine
locked"). The grid tools of `grid.py` run as StructuredTools with `handle_tool_error=True`, so a failing tool
answers the model with its error text. Both executors' ChatOpenAI call the scripted model (one retry). Each
request is wrapped in a `handle_request` span of the same provider.

The ground truth is one request run per user request, entered at outage_hotline: every agent's model calls
(counted by each ChatOpenAI's own callback), the tool calls in the order they started (the agent tool with the
request it got and the planner's answer, then the planner's own calls), no handoff, and the hotline's answer. In
`planner_down` the model backend fails during the planner's turn: the agent tool raises and the request fails.
"""

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

from claims import each_request
from client import Scenario, failure, text, tool
from grid import FUNCTIONS
from hotel import call_recorded
from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import StructuredTool, ToolException
from langchain_count import CountCalls
from langchain_openai import ChatOpenAI
from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from request_run import agents_as_tools_run
from telemetry import flush, traced

tracer = traced("outage-hotline", lambda: [LangchainInstrumentor()])
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()


def grid_tool(function: Callable[..., str]) -> StructuredTool:
    """A grid tool as LangChain sees it (schema from the signature), recording each real execution; a failure
    is a ToolException, which the executor hands to the model as the tool's answer."""

    @functools.wraps(function)
    def run(**arguments: Any) -> str:
        try:
            return call_recorded(FUNCTIONS, s, function.__name__, arguments)
        except RuntimeError as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool.from_function(run, handle_tool_error=True)


def executor(name: str, instructions: str, tools: list[Any]) -> AgentExecutor:
    model = ChatOpenAI(model="gpt-4o-mini", max_retries=1, callbacks=[CountCalls(model_calls, name)])
    prompt = ChatPromptTemplate.from_messages(
        [("system", instructions), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(model, tools, prompt)
    return AgentExecutor(agent=agent, tools=tools, name=name)


planner = executor(
    "field_service_planner",
    "You plan field service for electricity meters: read meters, open fault tickets, issue credit notes.",
    [grid_tool(FUNCTIONS[n]) for n in ("meter_reading", "open_fault_ticket", "issue_credit_note")],
)


def escalate_to_field_service(request: str) -> str:
    """Hand a meter or billing problem to the field service planner and get its answer."""
    entry: dict[str, Any] = {
        "name": "escalate_to_field_service",
        "arguments": {"request": request},
        "result": None,
        "error": True,
    }
    s.runs[-1]["tool_calls"].append(entry)
    answer = str(planner.invoke({"input": request})["output"]).strip()
    entry.update(result=answer, error=False)
    return answer


hotline = executor(
    "outage_hotline",
    "You answer an electricity outage hotline; escalate meter faults and billing fixes to field service.",
    [
        StructuredTool.from_function(escalate_to_field_service),
        grid_tool(FUNCTIONS["tariff_quote"]),
        grid_tool(FUNCTIONS["delete_account"]),
    ],
)

SCENARIOS = {
    "fault_escalated": (
        ["My meter M-118 shows nothing on the display; can someone come and look?"],
        [
            tool("escalate_to_field_service", {"request": "Meter M-118 has a blank display; arrange a visit."}),
            tool("meter_reading", {"meter_id": "M-118"}),
            tool("open_fault_ticket", {"meter_id": "M-118", "fault": "blank display"}),
            text("Ticket FT-7781 is open for M-118; an engineer visits on Tuesday."),
            text("An engineer will look at meter M-118 on Tuesday (ticket FT-7781)."),
        ],
    ),
    "credit_refused": (
        ["You overcharged account A-5512 by 40 euros; credit it back please."],
        [
            tool("escalate_to_field_service", {"request": "Credit 40 EUR back to account A-5512."}),
            tool("issue_credit_note", {"account": "A-5512", "amount": 40}),
            text("The credit note could not be issued: the billing engine is locked."),
            text("Sorry, I could not credit account A-5512 yet: the billing engine is locked. Try again tomorrow."),
        ],
    ),
    "close_account": (
        ["I am moving abroad; delete my energy account, customer u-2290."],
        [tool("delete_account", {"user_id": "u-2290"}), text("Your energy account u-2290 has been deleted.")],
    ),
    "planner_down": (
        ["Read my meter M-207 and tell me if it is broken."],
        [
            tool("escalate_to_field_service", {"request": "Check whether meter M-207 is faulty."}),
            tool("meter_reading", {"meter_id": "M-207"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}


def run(request: str) -> None:
    with agents_as_tools_run(s, "outage_hotline", request, model_calls) as answer:
        answer["output"] = hotline.invoke({"input": request})["output"]


for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run(request)
    flush()
