"""Google ADK's own GenAI spans on a `LoopAgent` of a drafter and a reviewer, ended by a tool that escalates.

`meter_letter_loop` (LoopAgent, at most 3 rounds) runs `letter_drafter` (read_meter, book_engineer,
waive_late_fee, which fails, delete_account: the tools of `utility.py`), which acts on the customer's request and
drafts the reply, then `letter_reviewer` (sign_off_letter), which either asks for another round in plain text or
calls `sign_off_letter`; that tool sets `escalate`, the reviewer's model answers once more after it, and the loop
ends. The agents use LiteLlm('openai/gpt-4o-mini') against the scripted model. ADK writes its spans through the
global TracerProvider (OTLP/HTTP protobuf); message content is on
(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY). A raising tool is recovered by
`on_tool_error_callback`, which answers the model `{"error": ...}`. Each request is wrapped in a `handle_request`
span.

The ground truth is one request run per user request, entered at the loop: every agent's model calls in every
round (counted by before_model_callback), the tool calls in the order they ran (sign_off_letter among them: it
names no agent, it ends the loop), no handoff (the loop moving from drafter to reviewer and back is the loop's
own), and the answer the user got last (the final response of the last agent that answered). In
`reviewer_failure` the model backend fails during letter_reviewer's turn, the loop's second step.
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

from adk_runner import counting_agent, workflow_request
from claims import each_request
from client import Scenario, failure, text, tool
from google.adk.agents import LoopAgent
from google.adk.tools.tool_context import ToolContext
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from utility import utility_tools

provider = TracerProvider(resource=Resource.create({"service.name": "meter-letters"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("meter-letters")

s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls per agent in the current request
TOOLS = utility_tools(lambda: s)


def sign_off_letter(letter_id: str, tool_context: ToolContext) -> str:
    """Sign off a reviewed letter to the customer and end the review."""
    tool_context.actions.escalate = True  # ends the LoopAgent once the reviewer's turn is over
    return s.ran("sign_off_letter", {"letter_id": letter_id}, f"letter {letter_id} signed off")


def letter_loop() -> LoopAgent:
    drafter = counting_agent(
        "letter_drafter",
        "You act on the customer's meter request and draft the reply letter; revise it when the reviewer asks.",
        [TOOLS[name] for name in ("read_meter", "book_engineer", "waive_late_fee", "delete_account")],
        CALLS,
    )
    reviewer = counting_agent(
        "letter_reviewer",
        "You review the drafted letter: ask for what is missing, or sign it off (letter L-1).",
        [sign_off_letter],
        CALLS,
    )
    return LoopAgent(
        name="meter_letter_loop",
        description="Drafts and reviews the reply to a customer until the reviewer signs it off.",
        max_iterations=3,
        sub_agents=[drafter, reviewer],
    )


SIGN_OFF = tool("sign_off_letter", {"letter_id": "L-1"})
SCENARIOS = {
    "two_rounds": (
        ["My meter M-31 shows nonsense. Tell me the reading and get someone to look at it on Friday morning."],
        [
            tool("read_meter", {"meter_id": "M-31"}),
            text("Draft: M-31 reads 48213 kWh today."),
            text("The draft does not book the visit the customer asked for."),
            tool("book_engineer", {"meter_id": "M-31", "slot": "Friday 09:00"}),
            text("Draft: M-31 reads 48213 kWh; an engineer comes on Friday 09:00, job EV-3391."),
            SIGN_OFF,
            text("Letter L-1 is signed off: M-31 reads 48213 kWh and engineer job EV-3391 is booked for Friday."),
        ],
    ),
    "fee_waiver_error": (
        ["Waive the late fee on invoice INV-772, I paid late because of your outage."],
        [
            tool("waive_late_fee", {"invoice_id": "INV-772"}),
            text("Draft: we could not waive the late fee on INV-772; the fee ledger is sealed."),
            SIGN_OFF,
            text("Letter L-1 is signed off: the late fee on INV-772 could not be waived, the fee ledger is sealed."),
        ],
    ),
    "close_account": (
        ["Close my energy account c-9140, I have moved out."],
        [
            tool("delete_account", {"user_id": "c-9140"}),
            text("Draft: account c-9140 has been closed."),
            SIGN_OFF,
            text("Letter L-1 is signed off: account c-9140 is closed."),
        ],
    ),
    "reviewer_failure": (
        ["What does meter M-31 read?"],
        [
            tool("read_meter", {"meter_id": "M-31"}),
            text("Draft: M-31 reads 48213 kWh today."),
            failure(500, "model backend down"),
        ],
    ),
}


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):
        with tracer.start_as_current_span("handle_request"):
            await workflow_request(s, letter_loop(), request, "meter-letters", CALLS)
        provider.force_flush()


asyncio.run(main())
