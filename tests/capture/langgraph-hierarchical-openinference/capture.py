"""LangGraph hierarchical teams: a top-level `langgraph_supervisor.create_supervisor` (front_desk) over two team
supervisors (metering_team, billing_team), each itself a `create_supervisor` graph over its own
`create_react_agent` workers, traced by openinference-instrumentation-langchain.

metering_team leads meter_reader (read_meter) and field_scheduler (book_engineer); billing_team leads fee_clerk
(waive_late_fee) and closure_clerk (delete_account). Every supervisor hands work down with its own handoff tools
(`create_handoff_tool` named pass_to_metering, hand_over_billing, assign_*), and the library hands control back up
after each worker and team (its handoff-back messages, without a model call). Both levels keep the full history,
so the top graph's final messages hold every handoff. Workers report tool failures to their model
(`ToolNode(handle_tool_errors=True)`). Each request is wrapped in a `handle_request` span.

The ground truth is the request run of the top graph: the user's request, front_desk's last answer (none when
the graph raised), every agent's model calls (a callback on each agent's model) and tool calls (recorded by the
tools), and the handoffs read from the final messages (or from the agents that acted, when the graph raised).
"""

import itertools
from collections import Counter

from client import Scenario, failure, text, tool
from langchain_core.tools import tool as lc_tool
from langchain_count import CountCalls
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph_handoffs import graph_handoffs
from langgraph_supervisor import create_handoff_tool, create_supervisor
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from utility import utility_tools

provider = TracerProvider(resource=Resource.create({"service.name": "utility-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
LangChainInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("utility-service")

s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()  # model calls per agent in the current request
TOOLS = {name: lc_tool(function) for name, function in utility_tools(lambda: s).items()}
TOP = "front_desk"


def chat_model(agent_name):
    return ChatOpenAI(model="gpt-4o-mini", callbacks=[CountCalls(model_calls, agent_name)])


def worker(name, tool_names, prompt):
    tools = ToolNode([TOOLS[n] for n in tool_names], handle_tool_errors=True)
    return create_react_agent(chat_model(name), tools, prompt=prompt, name=name)


# team -> (handoff tool of the top supervisor, {worker: (handoff tool, tools, prompt)}, team prompt)
TEAMS = {
    "metering_team": (
        "pass_to_metering",
        {
            "meter_reader": ("assign_meter_reader", ["read_meter"], "You read electricity meters."),
            "field_scheduler": ("assign_field_scheduler", ["book_engineer"], "You book engineer visits."),
        },
        "You lead the metering team: give meter readings to meter_reader and visits to field_scheduler.",
    ),
    "billing_team": (
        "hand_over_billing",
        {
            "fee_clerk": ("assign_fee_clerk", ["waive_late_fee"], "You handle late-payment fees."),
            "closure_clerk": ("assign_closure_clerk", ["delete_account"], "You close customer accounts."),
        },
        "You lead the billing team: give fees to fee_clerk and account closures to closure_clerk.",
    ),
}
PARENT = {TOP: None}  # agent -> the supervisor it reports back to
HANDOFF_TOOLS = {}  # handoff tool name -> the supervisor that holds it
teams = []
for team, (team_tool, workers, team_prompt) in TEAMS.items():
    PARENT[team] = TOP
    HANDOFF_TOOLS[team_tool] = TOP
    members = []
    for name, (handoff, tool_names, prompt) in workers.items():
        PARENT[name] = team
        HANDOFF_TOOLS[handoff] = team
        members.append(worker(name, tool_names, prompt))
    handoffs_down = [create_handoff_tool(agent_name=n, name=h) for n, (h, _, _) in workers.items()]
    teams.append(
        create_supervisor(
            members,
            model=chat_model(team),
            tools=handoffs_down,
            prompt=team_prompt,
            supervisor_name=team,
            output_mode="full_history",
        ).compile(name=team)
    )
front_desk = create_supervisor(
    teams,
    model=chat_model(TOP),
    tools=[create_handoff_tool(agent_name=team, name=h) for team, (h, _, _) in TEAMS.items()],
    prompt="You are the energy company's front desk: pass meter and visit requests to metering_team, bills and "
    "accounts to billing_team, then answer the customer.",
    supervisor_name=TOP,
    output_mode="full_history",
).compile(name=TOP)


def run_request(request: str) -> None:
    """Run the top graph on one request. A graph that raised returns no messages: its handoffs are then the descent
    through the agents that acted, each one's supervisor handing to it."""
    request_run = s.run(TOP, request)
    model_calls.clear()
    try:
        messages = front_desk.invoke({"messages": [{"role": "user", "content": request}]})["messages"]
    except Exception as exc:  # the model backend failed: the graph raised
        print(f"   {TOP} failed: {type(exc).__name__}: {exc}")
        s.finish(None, "error", sum(model_calls.values()))
        acted = list(model_calls)
        request_run["handoffs"] = [{"from": PARENT[a], "to": a} for a in acted[1:]]
        assert all(PARENT[b] == a for a, b in itertools.pairwise(acted)), acted
    else:
        s.finish(messages[-1].content, "ok", sum(model_calls.values()))
        request_run["handoffs"] = graph_handoffs(messages, HANDOFF_TOOLS.__getitem__, PARENT.__getitem__)
    request_run.update(
        nested_runs_allowed=True,
        note="The request run is front_desk's graph with every team lead's and worker's model and tool calls; "
        "the handoffs include each worker's and team's automatic handoff back. Model calls per agent: "
        + ", ".join(f"{name} {calls}" for name, calls in model_calls.items())
        + ".",
    )


SCENARIOS = {
    "happy": (
        "Read meter M-4471 and book an engineer visit for it on Tuesday morning.",
        [
            tool("pass_to_metering", {}),
            tool("assign_meter_reader", {}),
            tool("read_meter", {"meter_id": "M-4471"}),
            text("Meter M-4471 reads 48213 kWh."),
            tool("assign_field_scheduler", {}),
            tool("book_engineer", {"meter_id": "M-4471", "slot": "Tuesday morning"}),
            text("Engineer booked for M-4471 on Tuesday morning, job EV-3391."),
            text("M-4471 reads 48213 kWh; an engineer comes Tuesday morning (job EV-3391)."),
            text("Your meter M-4471 reads 48213 kWh and an engineer visits on Tuesday morning, job EV-3391."),
        ],
    ),
    "tool_error": (
        "Please waive the late fee on invoice INV-902.",
        [
            tool("hand_over_billing", {}),
            tool("assign_fee_clerk", {}),
            tool("waive_late_fee", {"invoice_id": "INV-902"}),
            text("I could not waive it: the fee ledger is sealed."),
            text("The late fee on INV-902 could not be waived."),
            text("Sorry, the late fee on INV-902 cannot be waived right now: the fee ledger is sealed."),
        ],
    ),
    "two_teams": (
        "Take a final reading of meter M-7730, then close my account, customer u-420.",
        [
            tool("pass_to_metering", {}),
            tool("assign_meter_reader", {}),
            tool("read_meter", {"meter_id": "M-7730"}),
            text("Meter M-7730 reads 48213 kWh."),
            text("Final reading of M-7730: 48213 kWh."),
            tool("hand_over_billing", {}),
            tool("assign_closure_clerk", {}),
            tool("delete_account", {"user_id": "u-420"}),
            text("Account u-420 deleted."),
            text("The account u-420 is closed."),
            text("Your final reading of M-7730 is 48213 kWh and account u-420 is closed."),
        ],
    ),
    "agent_error": (
        "Read meter M-5120 please.",
        [
            tool("pass_to_metering", {}),
            tool("assign_meter_reader", {}),
            tool("read_meter", {"meter_id": "M-5120"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for scenario, (request, replies) in SCENARIOS.items():
    with Scenario(scenario, replies, nested_runs_allowed=True) as s:
        with tracer.start_as_current_span("handle_request"):
            run_request(request)
        provider.force_flush()
