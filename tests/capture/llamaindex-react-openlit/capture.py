"""A LlamaIndex `ReActAgent` (the workflow agent) with function tools, traced by OpenLIT (`openlit.init`, its
LlamaIndex and OpenAI instrumentations, message content on by default).

`meter_desk` serves energy customers with the tools of `../utility.py` (read_meter, book_engineer,
waive_late_fee, which fails, delete_account). A ReAct agent sends no tools to the model: it asks for a tool in
its text (`Thought:` / `Action:` / `Action Input:`), LlamaIndex parses that and runs the tool, and the
observation goes back in the next request's text; `Answer:` ends the run. The model is the scripted one through
`OpenAILike` (Chat Completions, streamed). Each request runs inside a `handle_request` span.

The ground truth is the agent's run: the user's request, its answer, its model calls (one `AgentInput` event
each, from the agent's own event stream) and the tool calls as the tools ran them. OpenLIT writes no span of its
own for this agent (its LlamaIndex instrumentation needs the `llama-index` bundle and even then leaves the workflow
agents alone): the trace is the model calls under `handle_request`, with every message. In `backend_down` the model
backend fails after the first tool ran and the run raises.
"""

import asyncio

from client import Scenario, each, failure, text
from llama_index.core.agent.workflow import AgentInput, ReActAgent
from llama_index.core.tools import FunctionTool
from llamaindex_llm import scripted_llm
from telemetry import flush, traced
from utility import utility_tools

tracer = traced("meter-desk")
s: Scenario  # the scenario whose request run the tools record into
AGENT = "meter_desk"
TOOLS = [FunctionTool.from_defaults(f) for f in utility_tools(lambda: s).values()]


def action(name: str, arguments: str) -> dict:
    """A ReAct reply asking for one tool, in the text format LlamaIndex's ReAct parser reads."""
    return text(f"Thought: I need a tool to answer this.\nAction: {name}\nAction Input: {arguments}")


def answer(content: str) -> dict:
    return text(f"Thought: I can answer without using any more tools.\nAnswer: {content}")


async def run(request: str) -> None:
    truth = s.run(AGENT, request)
    truth["handoffs"] = []
    agent = ReActAgent(
        name=AGENT,
        description="Answers customers of an energy utility about meters, visits and bills.",
        llm=scripted_llm(max_retries=0),
        tools=TOOLS,
    )
    llm_calls = 0
    try:
        handler = agent.run(user_msg=request)
        async for event in handler.stream_events():
            llm_calls += isinstance(event, AgentInput)
        output, status = str((await handler).response.content), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    # Only model calls are on this trace: a tool's result stands only in the next model request, and a request that
    # failed records no messages, so a failed run's trace lacks the result its failed request would have shown.
    s.finish(output, status, llm_calls, lacks=["tool_results"] if status == "error" else None)


SCENARIOS = {
    "engineer_booked": (
        "My meter M-204 shows an error code. Read it and book an engineer for Tuesday morning.",
        [
            action("read_meter", '{"meter_id": "M-204"}'),
            action("book_engineer", '{"meter_id": "M-204", "slot": "Tuesday 09:00"}'),
            answer("Meter M-204 reads 48213 kWh; engineer job EV-3391 is booked for Tuesday 09:00."),
        ],
    ),
    "fee_refused": (
        "Please waive the late fee on invoice INV-7730.",
        [
            action("waive_late_fee", '{"invoice_id": "INV-7730"}'),
            answer("I could not waive the late fee on INV-7730: the fee ledger is sealed."),
        ],
    ),
    "account_closed": (
        "I am moving out; delete my account, user u-8841.",
        [
            action("delete_account", '{"user_id": "u-8841"}'),
            answer("Your account u-8841 has been deleted."),
        ],
    ),
    "backend_down": (
        "What does meter M-311 read?",
        [action("read_meter", '{"meter_id": "M-311"}'), failure(500, "model backend unavailable")],
    ),
}


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (s: the scenario tools record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        flush()


asyncio.run(main())
