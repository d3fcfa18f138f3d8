"""smolagents ToolCallingAgent traced by openinference-instrumentation-smolagents.

A travel assistant (`ToolCallingAgent` on `OpenAIServerModel`, Chat Completions, not streamed) answers
through the framework's own `final_answer` tool, so every run ends with a scripted `final_answer` call
(not a tool call in the ground truth: its argument is the output). The `subagent` scenario gives the
travel agent a managed agent, `booking_agent`, which smolagents runs as a full agent run of its own
(`agent.run(task)`), listed after the outer run. OpenInference records message content by default.
Each scenario is wrapped in a `handle_request` span, as a web service would.

Ground truth: the tools record what they received and returned; the managed agent's call is recorded
around `ManagedAgent.__call__` (what the manager's tool call got back) and its run's answer comes
from smolagents' `FinalAnswerStep` step callback; a run's number of model calls is
the number of action steps in the agent's memory (one model call each; planning is off).
"""

import os

from client import Scenario, failure, tools
from client import tool as reply
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from smolagents import ActionStep, FinalAnswerStep, OpenAIServerModel, ToolCallingAgent, tool

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
SmolagentsInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")

model = OpenAIServerModel(
    model_id="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
)
stack: list[dict] = []  # ground truth of the runs under way, innermost last


def record(name: str, arguments: dict, result: str | None = None, error: bool = False) -> None:
    stack[-1]["tool_calls"].append(
        {"name": name, "arguments": arguments, "result": None if error else result, "error": error}
    )


@tool
def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports.

    Args:
        origin: departure airport code
        destination: arrival airport code
    """
    result = f"UA123 09:00 $320 ({origin}-{destination})"
    record("search_flights", {"origin": origin, "destination": destination}, result)
    return result


@tool
def book_flight(flight_id: str) -> str:
    """Book a flight by its id.

    Args:
        flight_id: the flight to book
    """
    result = f"booked {flight_id}, confirmation ABC123456"
    record("book_flight", {"flight_id": flight_id}, result)
    return result


@tool
def charge_card(amount: int) -> str:
    """Charge the customer's card.

    Args:
        amount: amount in dollars
    """
    record("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


@tool
def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city name
    """
    result = {"Paris": "12C rain", "Tokyo": "18C sunny", "London": "9C cloudy"}.get(city, "20C clear")
    record("get_weather", {"city": city}, result)
    return result


@tool
def delete_account(user_id: str) -> str:
    """Delete the customer's account.

    Args:
        user_id: the account to delete
    """
    result = f"account {user_id} deleted"
    record("delete_account", {"user_id": user_id}, result)
    return result


def model_calls(agent: ToolCallingAgent) -> int:
    return sum(isinstance(step, ActionStep) for step in agent.memory.steps)


class ManagedAgent(ToolCallingAgent):
    """A managed agent whose call (for the manager) and whose own run go into the ground truth."""

    def __call__(self, task: str, **kwargs):
        inner = {"agent_name": self.name, "input": None, "tool_calls": [], "output": None, "status": "error"}
        stack.append(inner)
        try:
            answer = super().__call__(task, **kwargs)
            inner["status"] = "ok"
        finally:
            inner.update(input=self.task, llm_calls=model_calls(self))
            stack.pop()
            subruns.append(inner)
        record(self.name, {"task": task, **kwargs}, answer)
        return answer


def final_answer_step(step: FinalAnswerStep, agent: ToolCallingAgent) -> None:
    """smolagents' step callback with the answer its run returns (the managed agent's own output)."""
    stack[-1]["output"] = step.output


TOOLS = [search_flights, book_flight, charge_card, get_weather, delete_account]
travel_agent = ToolCallingAgent(tools=TOOLS, model=model, name="travel_agent", verbosity_level=0)
subruns: list[dict] = []


def with_subagent() -> ToolCallingAgent:
    booking = ManagedAgent(
        tools=[book_flight],
        model=model,
        name="booking_agent",
        description="Books a flight by its id.",
        step_callbacks={FinalAnswerStep: final_answer_step},
        verbosity_level=0,
    )
    return ToolCallingAgent(
        tools=[search_flights], model=model, managed_agents=[booking], name="travel_agent", verbosity_level=0
    )


def run(s: Scenario, agent: ToolCallingAgent, request: str) -> None:
    """One agent run (`agent.run(task)`) and its ground truth, then the managed agents' runs."""
    stack.append(s.run("travel_agent", request))
    try:
        answer = agent.run(request)
        s.finish(answer, "ok", model_calls(agent))
    except Exception as exc:  # the run failed
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:120]}")
        s.finish(None, "error", model_calls(agent))
    stack.pop()
    s.runs.extend(subruns)
    subruns.clear()


def final(answer: str) -> dict:
    return reply("final_answer", {"answer": answer})


SCENARIOS = {
    "happy": [
        (
            "Book me the cheapest flight from SFO to JFK tomorrow.",
            [
                reply("search_flights", {"origin": "SFO", "destination": "JFK"}),
                reply("book_flight", {"flight_id": "UA123"}),
                final("Your flight UA123 is booked. Confirmation: ABC123456"),
            ],
        )
    ],
    "forbidden": [
        (
            "Please close my account, user id u-42.",
            [
                reply("delete_account", {"user_id": "u-42"}),
                final("Your account u-42 has been deleted."),
            ],
        )
    ],
    "tool_error": [
        (
            "Charge my card 120 dollars for the upgrade.",
            [
                reply("charge_card", {"amount": 120}),
                final("Sorry, your card was declined."),
            ],
        )
    ],
    "many_calls": [
        (
            "Check the weather in seven cities for my trip.",
            [
                *[
                    reply("get_weather", {"city": c})
                    for c in ("Paris", "Tokyo", "London", "Rome", "Oslo", "Lima", "Cairo")
                ],
                final("Paris 12C rain, Tokyo 18C sunny, London 9C cloudy, the rest 20C clear."),
            ],
        )
    ],
    "parallel": [
        (
            "What's the weather in Paris and Tokyo?",
            [
                tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
                final("Paris: 12C and rain. Tokyo: 18C and sunny."),
            ],
        )
    ],
    "agent_error": [
        (
            "Book me a flight to Mars.",
            [
                reply("search_flights", {"origin": "SFO", "destination": "MARS"}),
                failure(500, "model backend unavailable"),
            ],
        )
    ],
    "two_runs": [
        ("What's the weather in Paris?", [reply("get_weather", {"city": "Paris"}), final("Paris: 12C and rain.")]),
        ("And in Tokyo?", [reply("get_weather", {"city": "Tokyo"}), final("Tokyo: 18C and sunny.")]),
    ],
    "subagent": [
        (
            "Find and book a flight from SFO to JFK.",
            [
                reply("search_flights", {"origin": "SFO", "destination": "JFK"}),
                reply("booking_agent", {"task": "Book flight UA123 for the user."}),
                reply("book_flight", {"flight_id": "UA123"}),  # booking_agent's own run
                final("Booked UA123, confirmation ABC123456."),
                final("Booked UA123 from SFO to JFK, confirmation ABC123456."),
            ],
        )
    ],
}

for name, runs in SCENARIOS.items():
    replies = [r for _, script in runs for r in script]
    with Scenario(name, replies) as s:
        with tracer.start_as_current_span("handle_request"):
            for request, _ in runs:
                run(s, with_subagent() if name == "subagent" else travel_agent, request)
        provider.force_flush()
