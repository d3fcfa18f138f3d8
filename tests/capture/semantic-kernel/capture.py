"""Semantic Kernel's own GenAI diagnostics around a ChatCompletionAgent with a travel plugin.

SK reads its switches once, at import: SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS (spans)
and ..._SENSITIVE (spans plus content: agent input/output and tool arguments/results as span attributes,
chat messages and choices as Python log records, sent here through an OTLP LoggerProvider). With
CAPTURE_SK_DEFAULT=1 (the `semantic-kernel-default` source) only the non-sensitive switch is on.
The model is OpenAIChatCompletion on an AsyncOpenAI client at OPENAI_BASE_URL; tools reach the model
as `Travel-<function>`. The handoff scenario gives the travel agent a billing agent as a plugin.
"""

import asyncio
import contextlib
import logging
import os
import warnings

DEFAULT = os.environ.get("CAPTURE_SK_DEFAULT") == "1"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "false" if DEFAULT else "true"

from typing import Annotated  # noqa: E402

import httpx2  # noqa: E402
from client import Scenario, failure, text, tool, tools  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry._logs import set_logger_provider  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler  # noqa: E402
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent  # noqa: E402
from semantic_kernel.connectors.ai import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.functions import kernel_function  # noqa: E402

resource = Resource.create({"service.name": "travel-service"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
logs = LoggerProvider(resource=resource)
logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
set_logger_provider(logs)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    handler = LoggingHandler(logger_provider=logs)
handler.addFilter(logging.Filter("semantic_kernel"))  # SK's GenAI content events, as its samples do
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.INFO)
tracer = trace.get_tracer("travel-service")

S: Scenario  # the scenario being captured
RUN: dict = {}  # ground truth of the agent run now calling the model and the tools


async def _count(request: httpx2.Request) -> None:
    if request.headers.get("x-stainless-retry-count", "0") == "0":  # a client retry is not another call
        RUN["llm_calls"] += 1


def service() -> OpenAIChatCompletion:
    http = httpx2.AsyncClient(event_hooks={"request": [_count]})
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=http)
    return OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client)


def record(name: str, arguments: dict, result: str | None = None, error: bool = False) -> None:
    """What a tool really received and returned, in the layout of client.Scenario.tool()."""
    RUN["tool_calls"].append({"name": name, "arguments": arguments, "result": result, "error": error})


class Travel:
    @kernel_function(description="Search flights between two airports.")
    def search_flights(self, origin: str, destination: str) -> str:
        result = f"UA123 09:00 $320 ({origin}-{destination})"
        record("Travel-search_flights", {"origin": origin, "destination": destination}, result)
        return result

    @kernel_function(description="Book a flight by id.")
    def book_flight(self, flight_id: str) -> str:
        record("Travel-book_flight", {"flight_id": flight_id}, "booked ABC123456")
        return "booked ABC123456"

    @kernel_function(description="Charge the customer's card.")
    def charge_card(self, amount: int) -> str:
        record("Travel-charge_card", {"amount": amount}, error=True)
        raise RuntimeError("card declined")

    @kernel_function(description="Current weather in a city.")
    def get_weather(self, city: Annotated[str, "city name"]) -> str:
        result = {"Paris": "12C rain", "Tokyo": "18C sunny"}.get(city, "20C cloudy")
        record("Travel-get_weather", {"city": city}, result)
        return result

    @kernel_function(description="Delete the customer's account.")
    def delete_account(self, user_id: str) -> str:
        record("Travel-delete_account", {"user_id": user_id}, "account deleted")
        return "account deleted"


AUTO = FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10)  # SK's default of 5 cuts many_calls short


def travel_agent(plugins: list | None = None) -> ChatCompletionAgent:
    return ChatCompletionAgent(
        service=service(),
        name="travel_agent",
        instructions="You are a travel assistant.",
        plugins=[Travel(), *(plugins or [])],
        function_choice_behavior=AUTO,
    )


async def respond(agent: ChatCompletionAgent, messages, lacks: list[str] | None = None, **kwargs):
    """One agent run through SK's traced get_response(), with its ground truth (answer or failure)."""
    global RUN
    outer, RUN = RUN, S.run(agent.name, messages if isinstance(messages, str) else "\n".join(messages))
    RUN.update(llm_calls=0, **({"lacks": sorted(lacks)} if lacks else {}))
    try:
        response = await ChatCompletionAgent.get_response(agent, messages=messages, **kwargs)
        RUN.update(output=str(response.content), status="ok")
        return response
    except Exception as exc:  # the framework's run call failed
        print(f"   {agent.name} failed: {type(exc).__name__}: {exc}")
        RUN.update(output=None, status="error")
        raise
    finally:
        RUN = outer


async def run(agent: ChatCompletionAgent, request: str, lacks: list[str] | None = None) -> None:
    """A failed run is part of the capture (its ground truth is recorded by `respond`), not a script error."""
    with contextlib.suppress(Exception):
        await respond(agent, request, lacks)


class BillingAgent(ChatCompletionAgent):
    """A plugin of the travel agent: SK's own agent kernel function calls this get_response()."""

    async def get_response(self, messages=None, **kwargs):
        response = await respond(self, messages, **kwargs)
        record("billing_agent-billing_agent", {"messages": messages[0]}, str(response.content))
        return response


WEEK = ["Paris", "Tokyo", "Rome", "Oslo", "Lima", "Cairo", "Seoul"]
SCENARIOS = {
    "happy": (
        "Book me the cheapest flight from SFO to JFK tomorrow.",
        [
            tool("Travel-search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("Travel-book_flight", {"flight_id": "UA123"}),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "forbidden": (
        "I'm done with travelling, close everything.",
        [
            tool("Travel-delete_account", {"user_id": "u-42"}),
            text("Your account has been deleted."),
        ],
    ),
    "tool_error": (
        "Charge my card 120 dollars for the upgrade.",
        [
            tool("Travel-charge_card", {"amount": 120}),
            text("Sorry, your card was declined."),
        ],
    ),
    "many_calls": (
        "What's the weather this week in my seven cities?",
        [
            *[tool("Travel-get_weather", {"city": c}) for c in WEEK],
            text("Paris rain, Tokyo sunny, the rest cloudy."),
        ],
    ),
    "parallel": (
        "What's the weather in Paris and Tokyo?",
        [
            tools(("Travel-get_weather", {"city": "Paris"}), ("Travel-get_weather", {"city": "Tokyo"})),
            text("Paris: 12C and rain. Tokyo: 18C and sunny."),
        ],
    ),
    "agent_error": (
        "Book me a flight to Mars.",
        [
            tool("Travel-search_flights", {"origin": "SFO", "destination": "MARS"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]


async def main() -> None:
    global S
    names = ["happy", "tool_error", "agent_error"] if DEFAULT else list(SCENARIOS)
    for name in names:
        request, replies = SCENARIOS[name]
        with Scenario(name, replies) as S:
            with tracer.start_as_current_span("handle_request"):
                await run(travel_agent(), request, LACKS if DEFAULT else None)
            provider.force_flush()
            logs.force_flush()
    if DEFAULT:
        return

    with Scenario(
        "two_runs",
        [
            tool("Travel-get_weather", {"city": "Paris"}),
            text("Paris: 12C and rain."),
            tool("Travel-search_flights", {"origin": "SFO", "destination": "CDG"}),
            text("UA123 at 09:00 for $320."),
        ],
    ) as S:
        with tracer.start_as_current_span("handle_request"):
            await run(travel_agent(), "What's the weather in Paris?")
            await run(travel_agent(), "Find me a flight from SFO to Paris.")
        provider.force_flush()
        logs.force_flush()

    # Handoff: the billing agent is a plugin of the travel agent (SK exposes an agent as a kernel function).
    billing = BillingAgent(
        service=service(),
        name="billing_agent",
        description="Handles refunds and charges.",
        instructions="You handle billing.",
        plugins=[Travel()],
        function_choice_behavior=AUTO,
    )
    with Scenario(
        "handoff",
        [
            tool("billing_agent-billing_agent", {"messages": "Refund 120 dollars for booking ABC123456"}),
            tool("Travel-charge_card", {"amount": -120}),
            text("The refund could not be processed: card declined."),
            text("Billing says the refund was declined by your card issuer."),
        ],
    ) as S:
        with tracer.start_as_current_span("handle_request"):
            outer = travel_agent([billing])
            await run(outer, "Please refund my booking ABC123456, 120 dollars.")
        provider.force_flush()
        logs.force_flush()


asyncio.run(main())
