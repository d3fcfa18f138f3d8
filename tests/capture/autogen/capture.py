"""AutoGen AgentChat's native OpenTelemetry tracing around an AssistantAgent with travel tools.

autogen-core writes `invoke_agent`/`execute_tool` spans (and runtime spans inside teams) to the global
TracerProvider; it never records content there. Its structured event logger (`autogen_core.events`:
one LLMCallEvent per model call with messages and response, one ToolCallEvent per successful tool) is
exported as OTLP log records through an OTel LoggingHandler: that is the content-on setting here.
With CAPTURE_AUTOGEN_DEFAULT=1 (the `autogen-default` source) only the spans are exported.
The model is OpenAIChatCompletionClient at OPENAI_BASE_URL; the subagent scenario gives the travel agent
the billing agent as an AgentTool, the handoff scenario runs a Swarm (HandoffMessage).
"""

import asyncio
import logging
import os
import warnings
from contextlib import contextmanager

import httpx2
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Handoff, Response, TaskResult
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import Swarm
from autogen_agentchat.tools import AgentTool
from autogen_core import EVENT_LOGGER_NAME
from autogen_core.tools import FunctionTool
from autogen_ext.models.openai import OpenAIChatCompletionClient
from client import Scenario, failure, text, tool, tools
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

DEFAULT = os.environ.get("CAPTURE_AUTOGEN_DEFAULT") == "1"
resource = Resource.create({"service.name": "travel-service"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)  # autogen-core traces to the global provider
logs = LoggerProvider(resource=resource)
if not DEFAULT:
    logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    set_logger_provider(logs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        events = logging.getLogger(EVENT_LOGGER_NAME)
        events.addHandler(LoggingHandler(logger_provider=logs))
        events.setLevel(logging.INFO)
tracer = trace.get_tracer("travel-service")
warnings.filterwarnings("ignore", "Resolved model mismatch")  # the scripted model echoes the requested name

S: Scenario  # the scenario being captured
RUN: dict = {}  # ground truth of the agent run now calling the model and the tools


async def _count(request: httpx2.Request) -> None:
    if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
        RUN["llm_calls"] += 1


def model() -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": True,
            "family": "gpt-4o",
            "structured_output": True,
        },
        http_client=httpx2.AsyncClient(event_hooks={"request": [_count]}),
    )


def record(name: str, arguments: dict, result: str | None = None, error: bool = False) -> None:
    """What a tool really received and returned, in the layout of client.Scenario.tool()."""
    RUN["tool_calls"].append({"name": name, "arguments": arguments, "result": result, "error": error})


def search_flights(origin: str, destination: str) -> str:
    """Search flights between two airports."""
    result = f"UA123 09:00 $320 ({origin}-{destination})"
    record("search_flights", {"origin": origin, "destination": destination}, result)
    return result


def book_flight(flight_id: str) -> str:
    """Book a flight by id."""
    record("book_flight", {"flight_id": flight_id}, "booked ABC123456")
    return "booked ABC123456"


def charge_card(amount: int) -> str:
    """Charge the customer's card."""
    record("charge_card", {"amount": amount}, error=True)
    raise RuntimeError("card declined")


def get_weather(city: str) -> str:
    """Current weather in a city."""
    result = {"Paris": "12C rain", "Tokyo": "18C sunny"}.get(city, "20C cloudy")
    record("get_weather", {"city": city}, result)
    return result


def delete_account(user_id: str) -> str:
    """Delete the customer's account."""
    record("delete_account", {"user_id": user_id}, "account deleted")
    return "account deleted"


TOOLS = [search_flights, book_flight, charge_card, get_weather, delete_account]


def agent(name: str = "travel_agent", tools: list = TOOLS, cls: type = AssistantAgent, **kwargs) -> AssistantAgent:
    return cls(
        name,
        model_client=model(),
        tools=tools,
        system_message="You are a travel assistant.",
        reflect_on_tool_use=True,
        max_tool_iterations=10,
        **kwargs,  # keep calling tools until it answers
    )


@contextmanager
def truth(name: str, task: str, lacks: list[str] | None = None):
    """Ground truth of one agent run; the tools and the model-call counter write into it meanwhile."""
    global RUN
    outer, RUN = RUN, S.run(name, task)
    RUN.update(llm_calls=0, output=None, status="error", **({"lacks": sorted(lacks)} if lacks else {}))
    try:
        yield RUN
    finally:
        RUN = outer


async def run(runner, task: str, lacks: list[str] | None = None, name: str | None = None) -> None:
    """One agent run: the text of the last message of its TaskResult, or a failure if run() raised."""
    with truth(name or runner.name, task, lacks) as this:
        try:
            result = await runner.run(task=task)
            this.update(output=result.messages[-1].to_text(), status="ok")
        except Exception as exc:  # the framework's run call failed
            print(f"   {runner.name} failed: {type(exc).__name__}: {exc}")
            # AutoGen records a model call only when it succeeds: the call that failed is not in the trace.
            this["lacks"] = sorted({*this.get("lacks", []), "llm_calls"})


class BillingAgent(AssistantAgent):
    """The inner agent of the subagent scenario: AgentTool runs it with run_stream()."""

    async def run_stream(self, *, task, **kwargs):
        with truth(self.name, task) as this:
            async for item in super().run_stream(task=task, **kwargs):
                if isinstance(item, TaskResult):
                    this.update(output=item.messages[-1].to_text(), status="ok")
                yield item


class RecordedAgentTool(AgentTool):
    """AutoGen's AgentTool, recording what it received and returned to the travel agent."""

    async def run_stream(self, args, cancellation_token):
        async for item in super().run_stream(args, cancellation_token):
            result = item
            yield item
        record(self.name, {"task": args.task}, self.return_value_as_string(result))  # the inner run is over


class SwarmBillingAgent(AssistantAgent):
    """The billing agent's turn in the Swarm (the team calls on_messages_stream) is its own run."""

    async def on_messages_stream(self, messages, cancellation_token):
        with truth(self.name, S.runs[0]["input"]) as this:  # it sees the user's task and the handoff
            async for item in super().on_messages_stream(messages, cancellation_token):
                if isinstance(item, Response):
                    this.update(output=item.chat_message.to_text(), status="ok")
                yield item


class RecordedHandoff(Handoff):
    """AutoGen's Handoff, its transfer tool recording the call like the other tools."""

    @property
    def handoff_tool(self) -> FunctionTool:
        def transfer() -> str:
            record(self.name, {}, self.message)
            return self.message

        return FunctionTool(transfer, name=self.name, description=self.description, strict=True)


WEEK = ["Paris", "Tokyo", "Rome", "Oslo", "Lima", "Cairo", "Seoul"]
SCENARIOS = {
    "happy": (
        "Book me the cheapest flight from SFO to JFK tomorrow.",
        [
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "forbidden": (
        "I'm done with travelling, close everything.",
        [
            tool("delete_account", {"user_id": "u-42"}),
            text("Your account has been deleted."),
        ],
    ),
    "tool_error": (
        "Charge my card 120 dollars for the upgrade.",
        [
            tool("charge_card", {"amount": 120}),
            text("Sorry, your card was declined."),
        ],
    ),
    "many_calls": (
        "What's the weather this week in my seven cities?",
        [
            *[tool("get_weather", {"city": c}) for c in WEEK],
            text("Paris rain, Tokyo sunny, the rest cloudy."),
        ],
    ),
    "parallel": (
        "What's the weather in Paris and Tokyo?",
        [
            tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
            text("Paris: 12C and rain. Tokyo: 18C and sunny."),
        ],
    ),
    "agent_error": (
        "Book me a flight to Mars.",
        [
            tool("search_flights", {"origin": "SFO", "destination": "MARS"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results", "llm_calls"]


def scenario(name: str, replies: list) -> Scenario:
    global S
    S = Scenario(name, replies)
    return S


async def main() -> None:
    names = ["happy", "tool_error", "agent_error"] if DEFAULT else list(SCENARIOS)
    for name in names:
        request, replies = SCENARIOS[name]
        with scenario(name, replies):
            with tracer.start_as_current_span("handle_request"):
                await run(agent(), request, LACKS if DEFAULT else None)
            provider.force_flush()
            logs.force_flush()
    if DEFAULT:
        return

    with scenario(
        "two_runs",
        [
            tool("get_weather", {"city": "Paris"}),
            text("Paris: 12C and rain."),
            tool("search_flights", {"origin": "SFO", "destination": "CDG"}),
            text("UA123 at 09:00 for $320."),
        ],
    ):
        with tracer.start_as_current_span("handle_request"):
            await run(agent(), "What's the weather in Paris?")
            await run(agent(), "Find me a flight from SFO to Paris.")
        provider.force_flush()
        logs.force_flush()

    # Subagent: the billing agent is an AgentTool of the travel agent; its run is a separate agent run.
    with scenario(
        "subagent",
        [
            tool("billing_agent", {"task": "Refund 120 dollars for booking ABC123456"}),
            tool("charge_card", {"amount": -120}),
            text("The refund could not be processed: card declined."),
            text("Billing says the refund was declined by your card issuer."),
        ],
    ):
        with tracer.start_as_current_span("handle_request"):
            billing = agent("billing_agent", cls=BillingAgent, description="Handles refunds and charges.")
            travel = agent(tools=[*TOOLS, RecordedAgentTool(billing, return_value_as_last_message=True)])
            await run(travel, "Please refund my booking ABC123456, 120 dollars.")
        provider.force_flush()
        logs.force_flush()

    # Handoff: a Swarm; the travel agent hands over to the billing agent with a HandoffMessage. The travel
    # agent's run ends there (no answer of its own); the billing agent's turn is its own run, with the answer.
    with scenario(
        "handoff",
        [
            tool("transfer_to_billing_agent", {}),
            tool("charge_card", {"amount": -120}),
            text("The refund could not be processed: card declined."),
        ],
    ):
        with tracer.start_as_current_span("handle_request"):
            billing = agent("billing_agent", cls=SwarmBillingAgent, description="Handles refunds.")
            team = Swarm(
                [agent(handoffs=[RecordedHandoff(target="billing_agent")]), billing],
                termination_condition=MaxMessageTermination(3),  # task, handoff, the billing agent's answer
            )
            await run(team, "Please refund my booking ABC123456, 120 dollars.", name="travel_agent")
        S.runs[0]["output"] = None  # the travel agent handed over: the answer is the billing agent's
        provider.force_flush()
        logs.force_flush()


asyncio.run(main())
