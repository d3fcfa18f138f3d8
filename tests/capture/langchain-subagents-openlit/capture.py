"""LangChain 1.x agents (`langchain.agents.create_agent`) in the documented subagents pattern: an entry agent whose
tools include two other `create_agent` agents, each wrapped as a tool that invokes it with the request it is given
and returns its last message. Traced by OpenLIT (`openlit.init`: its LangChain, LangGraph and OpenAI
instrumentations, message content on by default).

The utility desk of `../utility.py`: utility_concierge (read_meter, and the subagent tools ask_field_planner and
consult_fees_specialist) is the entry; field_planner books engineers (book_engineer), fees_specialist waives late
fees (waive_late_fee, which fails) and closes accounts (delete_account). A failing tool raises a ToolException the
tool hands to the model as its answer (`handle_tool_error=True`). Each request runs inside a `handle_request` span.

The ground truth is one request run per request, entered at utility_concierge: its answer, every model call of
the three agents (`on_chat_model_start` of each agent's chat model; retries are off), and the tool calls in the
order the model asked for them, a subagent tool among them with the request it was given and the answer it
returned, as `openai-agents-multi`'s `agent_as_tool` records an agent called as a tool: no handoff. In
`planner_failure` the model backend fails inside field_planner's turn and the entry agent's invoke raises.
"""

import functools
import os

import utility
from client import Scenario, each, failure, text, tool
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import StructuredTool, ToolException
from langchain_openai import ChatOpenAI
from telemetry import flush, traced

tracer = traced("utility-desk")

S: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = utility.utility_tools(lambda: S)
ENTRY = "utility_concierge"
acted: list[str] = []  # whose model each model call of the request in progress was


class Counted(BaseCallbackHandler):
    """Notes each call of one agent's chat model."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def on_chat_model_start(self, *args: object, **kwargs: object) -> None:
        acted.append(self.owner)


def desk_tool(name: str) -> StructuredTool:
    """A utility tool whose failure the tool hands to the model as a ToolException's text."""
    function = TOOLS[name]

    @functools.wraps(function)
    def run(*args: object, **kwargs: object) -> str:
        try:
            return function(*args, **kwargs)
        except RuntimeError as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool.from_function(run, handle_tool_error=True)


def agent(name: str, prompt: str, tools: list) -> object:
    model = ChatOpenAI(
        model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0, callbacks=[Counted(name)]
    )
    return create_agent(model, tools, system_prompt=prompt, name=name)


def subagent_tool(tool_name: str, description: str, worker: object) -> StructuredTool:
    """`worker` as a tool of the entry agent: invoked with the request it is given, answering with its last
    message (LangChain's subagents pattern); recorded as one tool call of the request."""

    def run(request: str) -> str:
        S.tool(tool_name, {"request": request})  # listed where the model asked for it, before the worker's calls
        call = S.runs[-1]["tool_calls"][-1]
        try:
            state = worker.invoke({"messages": [{"role": "user", "content": request}]})
        except Exception:
            call["error"] = True
            raise
        call["result"] = state["messages"][-1].content
        return call["result"]

    return StructuredTool.from_function(run, name=tool_name, description=description)


def concierge() -> object:
    planner = agent("field_planner", "You book engineer visits for meters.", [desk_tool("book_engineer")])
    fees = agent(
        "fees_specialist",
        "You handle late fees and account closures.",
        [desk_tool("waive_late_fee"), desk_tool("delete_account")],
    )
    return agent(
        ENTRY,
        "You are the utility's concierge. Read meters yourself; ask the specialists for the rest.",
        [
            desk_tool("read_meter"),
            subagent_tool("ask_field_planner", "Ask the field planner to book an engineer visit.", planner),
            subagent_tool("consult_fees_specialist", "Ask the fees specialist about fees or closing an account.", fees),
        ],
    )


def run(request: str) -> None:
    acted.clear()
    truth = S.run(ENTRY, request)
    try:
        state = concierge().invoke({"messages": [{"role": "user", "content": request}]})
        output, status = state["messages"][-1].content, "ok"
    except Exception as exc:
        print(f"   request failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    S.finish(output, status, len(acted))
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is utility_concierge's, with its subagents' model and tool calls beneath it; a "
        f"subagent called as a tool is a tool call of the request, not a handoff. Model calls by agent: {acted}.",
    )


SCENARIOS = {
    "engineer_booked": (
        "Meter M-31 reads oddly; read it and get an engineer out on Friday morning.",
        [
            tool("read_meter", {"meter_id": "M-31"}),
            tool("ask_field_planner", {"request": "Book an engineer for meter M-31 on Friday 08:00."}),
            tool("book_engineer", {"meter_id": "M-31", "slot": "Friday 08:00"}),
            text("Engineer booked for M-31 on Friday 08:00, job EV-3391."),
            text("M-31 reads 48213 kWh; an engineer comes on Friday at 08:00 (job EV-3391)."),
        ],
    ),
    "fee_refused": (
        "Please waive the late fee on invoice INV-88.",
        [
            tool("consult_fees_specialist", {"request": "Waive the late fee on invoice INV-88."}),
            tool("waive_late_fee", {"invoice_id": "INV-88"}),
            text("I could not waive the fee on INV-88: the fee ledger is sealed."),
            text("Sorry, the late fee on INV-88 cannot be waived: the fee ledger is sealed."),
        ],
    ),
    "account_closed": (
        "I have moved out; close my utility account, customer u-771.",
        [
            tool("consult_fees_specialist", {"request": "Close the account of customer u-771."}),
            tool("delete_account", {"user_id": "u-771"}),
            text("Account u-771 is deleted."),
            text("Your utility account u-771 has been closed."),
        ],
    ),
    "planner_failure": (
        "Get an engineer to meter M-44 on Monday.",
        [
            tool("ask_field_planner", {"request": "Book an engineer for meter M-44 on Monday 09:00."}),
            failure(503, "model backend overloaded"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run(request)
    flush()
