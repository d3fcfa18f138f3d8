"""A CrewAI `Flow` running two crews one after the other, traced by openinference-instrumentation-crewai with
openinference-instrumentation-openai for the LLM calls (CrewAI 1.x sends `openai/<model>` to its native
OpenAI provider), as ../crewai/capture.py sets it up.

The flow's `@start` step kicks off a triage crew (a concierge with find_hotels) and its `@listen` step an
action crew (a desk clerk with reserve_room, refund_payment, which fails, and delete_account), giving it
the triage crew's answer; the flow's answer is the action crew's. Each request is wrapped in a
`handle_request` span.

The ground truth is the request run of the flow kickoff: the user's request, the flow's answer, every
agent's model calls (CrewAI's own LLMCallStartedEvent) and tool calls (recorded by the tools). The flow
moves from one crew to the next by its own steps, not by an agent's handoff, so the ground truth names
no handoff (and leaves `handoffs` out); each crew's own run is described in the note.
"""

import os

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # no anonymous usage telemetry
os.environ["CREWAI_TRACING_ENABLED"] = "false"  # no CrewAI AMP tracing prompt

from collections import Counter

from client import Scenario, text, tool
from crewai import LLM, Agent, Crew, Task
from crewai.events import LLMCallStartedEvent, crewai_event_bus
from crewai.flow.flow import Flow, listen, start
from crewai.tools import tool as crew_tool
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "hotel-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
CrewAIInstrumentor().instrument(tracer_provider=provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("hotel-desk")

s: Scenario  # the scenario being captured; the tools record into its request run
LLM_CALLS: Counter[str] = Counter()  # agent role -> model calls CrewAI started
CREWS: list[str] = []  # each crew's answer, in order


@crewai_event_bus.on(LLMCallStartedEvent)
def _count(source, event):
    LLM_CALLS[event.agent_role] += 1


@crew_tool("find_hotels")
def find_hotels(city: str) -> str:
    """Find hotels in a city."""
    result = f"H-77 Hotel Lumiere, {city}, 140 EUR a night"
    s.tool("find_hotels", {"city": city}, result)
    return result


@crew_tool("reserve_room")
def reserve_room(hotel_id: str, nights: int) -> str:
    """Reserve a room in a hotel."""
    result = f"reserved {hotel_id}, code RZ-9081"
    s.tool("reserve_room", {"hotel_id": hotel_id, "nights": nights}, result)
    return result


@crew_tool("refund_payment")
def refund_payment(order_id: str) -> str:
    """Refund a payment."""
    s.tool("refund_payment", {"order_id": order_id}, error=True)
    raise RuntimeError("refund window closed")


@crew_tool("delete_account")
def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    result = f"account {user_id} deleted"
    s.tool("delete_account", {"user_id": user_id}, result)
    return result


def llm() -> LLM:
    return LLM(model="openai/gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])


def crew(role: str, tools: list, description: str) -> Crew:
    agent = Agent(role=role, goal="Help hotel guests", backstory=f"You are the {role}.", llm=llm(), tools=tools)
    task = Task(description=description, expected_output="A short answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task])


class GuestFlow(Flow):
    """Triage, then act on what triage found."""

    @start()
    def triage(self):
        answer = crew("concierge", [find_hotels], "Work out what the guest needs: {request}").kickoff(
            inputs={"request": self.state["request"]}
        )
        CREWS.append(answer.raw)
        return answer.raw

    @listen(triage)
    def act(self, triage_answer):
        answer = crew(
            "desk_clerk",
            [reserve_room, refund_payment, delete_account],
            "Do what the guest asked ({request}); the concierge found: {found}",
        ).kickoff(inputs={"request": self.state["request"], "found": triage_answer})
        CREWS.append(answer.raw)
        return answer.raw


def run_flow(request: str) -> None:
    request_run = s.run("GuestFlow", request)
    LLM_CALLS.clear()
    CREWS.clear()
    try:
        output, status = GuestFlow().kickoff(inputs={"request": request}), "ok"
    except Exception as exc:
        print(f"   flow failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    crewai_event_bus.flush()
    s.finish(output, status, sum(LLM_CALLS.values()))
    request_run.update(
        nested_runs_allowed=True,
        note="The request run is the flow kickoff with both crews' model and tool calls; the flow, not an agent, "
        "moves from the triage crew to the action crew. Each crew's own run is also reported, nested: "
        + "; ".join(f"{role}: {n} model call(s)" for role, n in LLM_CALLS.items())
        + f"; the crews' answers: {CREWS}.",
    )


SCENARIOS = {
    "stay_flow": (
        "Find me a hotel in Lisbon for 3 nights and reserve it.",
        [
            tool("find_hotels", {"city": "Lisbon"}),
            text("The guest wants H-77 Hotel Lumiere in Lisbon for 3 nights."),
            tool("reserve_room", {"hotel_id": "H-77", "nights": 3}),
            text("Reserved H-77 Hotel Lumiere in Lisbon for 3 nights, code RZ-9081."),
        ],
    ),
    "refund_error": (
        "I want a refund for order O-5521.",
        [
            text("The guest wants order O-5521 refunded."),
            tool("refund_payment", {"order_id": "O-5521"}),
            text("Sorry, the refund window for order O-5521 has closed."),
        ],
    ),
    "close_account": (
        "Please close my account, user 42.",
        [
            text("The guest wants account 42 closed."),
            tool("delete_account", {"user_id": "42"}),
            text("Your account 42 has been closed."),
        ],
    ),
}

for name, (request, replies) in SCENARIOS.items():
    with Scenario(name, replies, nested_runs_allowed=True) as s:
        with tracer.start_as_current_span("handle_request"):
            run_flow(request)
        provider.force_flush()
