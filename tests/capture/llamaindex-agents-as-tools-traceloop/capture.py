"""A LlamaIndex `FunctionAgent` orchestrator whose tools are other `FunctionAgent`s, traced by OpenLLMetry's
opentelemetry-instrumentation-llamaindex (Traceloop).

`service_lead` answers utility customers. It has one plain tool (`lookup_outage`) and two agents as tools:
`ask_meter_expert` runs the `meter_expert` agent (read_meter, schedule_visit) and `ask_billing_auditor` runs
the `billing_auditor` agent (recompute_bill, issue_credit, which fails, delete_account); each returns the
inner agent's answer to the orchestrator, which then answers the user. The agents talk Chat Completions to
the scripted model through `OpenAILike` (streamed, the default). Each request runs inside a
`handle_request` span.

The ground truth is the request run of the orchestrator: the user's request, its answer, every agent's model
calls (one `AgentInput` event each, from the orchestrator's and the inner agents' own event streams) and the
tool calls in the order they started: an agent called as a tool is a tool call of the request (its result
the inner agent's answer), followed by the inner agent's own calls. In `auditor_failure` the model backend
fails inside the billing auditor's turn and the request fails (the orchestrator's next model call fails too);
this instrumentation ends none of the spans of the failing steps, so the trace holds no error status.

Run as ../llamaindex-agents-as-tools-openlit/capture.py (INSTRUMENTATION="openlit"), the same requests are
traced by OpenLIT (`openlit.init`, its LlamaIndex and OpenAI instrumentations) instead; `telemetry.py` sets up
either.
"""

import asyncio
from collections import Counter

from client import Scenario, each, failure, text, tool
from llama_index.core.agent.workflow import AgentInput, FunctionAgent
from llama_index.core.tools import FunctionTool
from llamaindex_llm import scripted_llm
from telemetry import flush, traced


def openllmetry() -> list:
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor

    return [LlamaIndexInstrumentor()]


tracer = traced("utility-desk", None if globals().get("INSTRUMENTATION") == "openlit" else openllmetry)

llm = scripted_llm(max_retries=0)
s: Scenario  # the scenario whose request run the tools record into
calls: Counter[str] = Counter()  # model calls per agent in the request being captured


def lookup_outage(area: str) -> str:
    """Look up known power outages in an area."""
    return s.ran("lookup_outage", {"area": area}, f"no outage reported in {area}")


def read_meter(meter_id: str) -> str:
    """Read a customer's electricity meter."""
    return s.ran("read_meter", {"meter_id": meter_id}, f"{meter_id}: 48213 kWh, fault code E7")


def schedule_visit(meter_id: str, day: str) -> str:
    """Book a technician visit for a meter."""
    return s.ran("schedule_visit", {"meter_id": meter_id, "day": day}, f"visit V-88 booked for {day} at {meter_id}")


def recompute_bill(invoice_id: str) -> str:
    """Recompute an invoice from the meter readings."""
    return s.ran("recompute_bill", {"invoice_id": invoice_id}, f"{invoice_id} overcharged by 35.20 EUR")


def issue_credit(account_id: str, amount: float) -> str:
    """Credit a customer's account."""
    return s.ran("issue_credit", {"account_id": account_id, "amount": amount}, error="credit ledger locked")


def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    return s.ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


async def run_agent(agent: FunctionAgent, message: str) -> str:
    """Run one agent to its answer, counting its model calls from its own event stream."""
    handler = agent.run(user_msg=message)
    async for event in handler.stream_events():
        if isinstance(event, AgentInput):
            calls[event.current_agent_name] += 1
    return str((await handler).response.content)


def agent_tool(name: str, agent: FunctionAgent, description: str) -> FunctionTool:
    """An agent called as a tool: one tool call of the request, its result the inner agent's answer."""

    async def ask(question: str) -> str:
        entry = {"name": name, "arguments": {"question": question}, "result": None, "error": False}
        s.runs[-1]["tool_calls"].append(entry)
        try:
            entry["result"] = await run_agent(agent, question)
        except Exception:
            entry["error"] = True
            raise
        return entry["result"]

    return FunctionTool.from_defaults(async_fn=ask, name=name, description=description)


def orchestrator() -> FunctionAgent:
    meter_expert = FunctionAgent(
        name="meter_expert",
        description="Reads meters and books technicians.",
        llm=llm,
        tools=[FunctionTool.from_defaults(read_meter), FunctionTool.from_defaults(schedule_visit)],
        system_prompt="You read meters and book technician visits.",
    )
    billing_auditor = FunctionAgent(
        name="billing_auditor",
        description="Audits invoices, credits accounts and closes accounts.",
        llm=llm,
        tools=[
            FunctionTool.from_defaults(recompute_bill),
            FunctionTool.from_defaults(issue_credit),
            FunctionTool.from_defaults(delete_account),
        ],
        system_prompt="You audit bills and manage accounts.",
    )
    return FunctionAgent(
        name="service_lead",
        description="Answers utility customers, consulting specialists.",
        llm=llm,
        tools=[
            FunctionTool.from_defaults(lookup_outage),
            agent_tool("ask_meter_expert", meter_expert, "Ask the meter expert about a meter."),
            agent_tool("ask_billing_auditor", billing_auditor, "Ask the billing auditor about bills and accounts."),
        ],
        system_prompt="You answer customers of an electricity utility; consult the specialists as needed.",
    )


LACKS_IF_FAILED = globals().get("LACKS_IF_FAILED")  # set by a capture whose trace carries less when a request fails


async def run(request: str) -> None:
    truth = s.run("service_lead", request)
    truth["handoffs"] = []
    calls.clear()
    try:
        output, status = await run_agent(orchestrator(), request), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(calls.values()), lacks=LACKS_IF_FAILED if status == "error" else None)
    truth.update(
        nested_runs_allowed=True,
        note="The request run is service_lead's, with every agent's model and tool calls; an agent called as a "
        "tool is a tool call of the request, its own calls follow it. Model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in calls.items())
        + ".",
    )


SCENARIOS = {
    "meter_visit": (
        "My meter M-204 shows an error and the lights flicker in Riverside. Can someone come?",
        [
            tool("lookup_outage", {"area": "Riverside"}),
            tool("ask_meter_expert", {"question": "Read meter M-204 and book a technician if it is faulty."}),
            tool("read_meter", {"meter_id": "M-204"}),
            tool("schedule_visit", {"meter_id": "M-204", "day": "Tuesday"}),
            text("Meter M-204 shows fault E7; technician visit V-88 is booked for Tuesday."),
            text(
                "There is no outage in Riverside. Your meter M-204 reports fault E7, "
                "so visit V-88 is booked for Tuesday."
            ),
        ],
    ),
    "credit_refused": (
        "Invoice INV-301 on account A-17 looks too high; please credit me the difference.",
        [
            tool("ask_billing_auditor", {"question": "Check invoice INV-301 and credit account A-17 any overcharge."}),
            tool("recompute_bill", {"invoice_id": "INV-301"}),
            tool("issue_credit", {"account_id": "A-17", "amount": 35.2}),
            text("INV-301 was overcharged by 35.20 EUR, but the credit failed: the ledger is locked."),
            text(
                "INV-301 was overcharged by 35.20 EUR; the credit could not be issued yet because the ledger is locked."
            ),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            tool("ask_billing_auditor", {"question": "Close the account of user 42."}),
            tool("delete_account", {"user_id": "42"}),
            text("Account 42 is deleted."),
            text("Your account 42 has been closed."),
        ],
    ),
    "auditor_failure": (
        "Why is invoice INV-301 so high?",
        [
            tool("ask_billing_auditor", {"question": "Explain why invoice INV-301 is high."}),
            tool("recompute_bill", {"invoice_id": "INV-301"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}


async def main() -> None:
    global s
    for s, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (s: the scenario the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await run(request)
        flush()


asyncio.run(main())
