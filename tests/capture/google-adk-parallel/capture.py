"""Google ADK's own GenAI spans on a fan-out: a `ParallelAgent` inside a `SequentialAgent`, then a summariser.

`grid_case_pipeline` (SequentialAgent) runs `field_survey` (ParallelAgent) of two LlmAgents, `meter_reader`
(read_meter) and `outage_watch` (check_outage), each storing its answer in the session state (`output_key`);
then `case_writer` (open_repair, waive_late_fee, which fails, delete_account) reads both answers from its
instruction's template and answers the customer. The agents use LiteLlm('openai/gpt-4o-mini') against the
scripted model. The scripted model answers requests in the order they come, so `outage_watch`'s model calls
wait (an async before_model_callback) until `meter_reader` has finished: both branches still start together
under the ParallelAgent, and which reply each gets is fixed. ADK writes its spans through the global
TracerProvider (OTLP/HTTP protobuf); message content is on (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=
SPAN_ONLY). A raising tool is recovered by `on_tool_error_callback`, which answers the model `{"error": ...}`.
Each request is wrapped in a `handle_request` span.

The ground truth is one request run per user request, entered at the root workflow agent: every agent's model
calls (counted by before_model_callback), the tool calls in the order they ran, no handoff (moving from one step
of a workflow to the next, or fanning out to its branches, is the workflow's), and the answer the user got last
(the final response of the last agent that answered). In `outage_watch_failure` the model backend fails during
outage_watch's turn, inside the fan-out.

Run as ../google-adk-parallel-default/capture.py (DEFAULT_SETTINGS=True), ADK keeps its default of no message
content, and every run's ground truth lists in `lacks` what that trace cannot carry. Run as
../google-adk-parallel-openinference/capture.py (INSTRUMENTATION="openinference"), the same requests are traced by
openinference-instrumentation-google-adk instead, which replaces ADK's own spans and needs ADK's legacy telemetry
schema (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1) for the `call_llm` span it records model calls on.
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
# content on, unless run as ../google-adk-parallel-default/capture.py (DEFAULT_SETTINGS: ADK's default, no content)
os.environ.update(
    {} if globals().get("DEFAULT_SETTINGS") else {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
)
# OpenInference records model calls on the call_llm span of ADK's legacy telemetry schema
os.environ.update({"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"} if globals().get("INSTRUMENTATION") else {})

from claims import each_request
from client import Scenario, failure, text, tool
from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types
from grid_desk import grid_tools
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

OPENINFERENCE = globals().get("INSTRUMENTATION") == "openinference"
provider = TracerProvider(resource=Resource.create({"service.name": "grid-service-desk"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
if OPENINFERENCE:
    from openinference.instrumentation.google_adk import GoogleADKInstrumentor

    GoogleADKInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("grid-service-desk")

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls per agent in the current request
READER_DONE = asyncio.Event()  # meter_reader has answered: outage_watch may call the model
TOOLS = grid_tools(lambda: s)
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry


async def count_call(callback_context, llm_request):
    """Count each model call; outage_watch's wait for meter_reader's answer (the scripted replies' order)."""
    if callback_context.agent_name == "outage_watch":
        await READER_DONE.wait()
    CALLS[callback_context.agent_name] = CALLS.get(callback_context.agent_name, 0) + 1


def reader_done(callback_context):
    READER_DONE.set()


def recover(tool, args, tool_context, error):
    return {"error": str(error)}


def agent(name: str, instruction: str, tools: list[str], **extra) -> LlmAgent:
    return LlmAgent(
        name=name,
        model=LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"]),
        instruction=instruction,
        tools=[TOOLS[t] for t in tools],
        before_model_callback=count_call,
        on_tool_error_callback=recover,
        **extra,
    )


def pipeline() -> SequentialAgent:
    survey = ParallelAgent(
        name="field_survey",
        description="Reads the meter and checks the grid at once.",
        sub_agents=[
            agent(
                "meter_reader",
                "Read the customer's meter.",
                ["read_meter"],
                output_key="reading",
                after_agent_callback=reader_done,
            ),
            agent(
                "outage_watch", "Check the grid around the customer's postcode.", ["check_outage"], output_key="grid"
            ),
        ],
    )
    writer = agent(
        "case_writer",
        "Meter: {reading}. Grid: {grid}. Open repairs, handle fees and closures, and answer the customer.",
        ["open_repair", "waive_late_fee", "delete_account"],
    )
    return SequentialAgent(
        name="grid_case_pipeline",
        description="Surveys the customer's meter and grid, then writes up the case.",
        sub_agents=[survey, writer],
    )


SURVEY = [
    tool("read_meter", {"meter_id": "M-77"}),
    text("Meter M-77 reads 4312 kWh, read 2 days ago."),
    tool("check_outage", {"postcode": "75011"}),
    text("No outage around 75011; the last cut was 3 weeks ago."),
]
SCENARIOS = {
    "survey_repair": (
        ["The display of my meter M-77 in 75011 is blank. Please send someone."],
        [
            *SURVEY,
            tool("open_repair", {"meter_id": "M-77", "fault": "blank display"}),
            text("Repair job RJ-5081 is open for meter M-77; there is no outage in 75011."),
        ],
    ),
    "fee_waiver_error": (
        ["Meter M-77, postcode 75011: the bill was late because of a cut. Waive the late fee on invoice INV-9."],
        [
            *SURVEY,
            tool("waive_late_fee", {"invoice_id": "INV-9"}),
            text("I could not waive the late fee on INV-9: the billing ledger is sealed. There was no recent cut."),
        ],
    ),
    "close_account": (
        ["I am moving out of 75011; take a last reading of M-77 and close my account u-318."],
        [
            *SURVEY,
            tool("delete_account", {"user_id": "u-318"}),
            text("Final reading of M-77: 4312 kWh. Account u-318 is closed."),
        ],
    ),
    "outage_watch_failure": (
        ["Is there a power cut at 75011? My meter M-77 is dark."],
        [SURVEY[0], SURVEY[1], failure(500, "model backend down")],
    ),
}


async def serve(request: str) -> None:
    """One user request through an InMemoryRunner at the root workflow agent; records its ground truth."""
    root = pipeline()
    run = s.run(root.name, request)
    run.update(handoffs=[], nested_runs_allowed=True)
    CALLS.clear()
    READER_DONE.clear()
    runner = InMemoryRunner(agent=root, app_name="grid")
    session = await runner.session_service.create_session(app_name="grid", user_id="customer-1")
    answer, status = None, "ok"
    try:
        async for event in runner.run_async(
            user_id="customer-1",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text=request)]),
        ):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(p.text or "" for p in event.content.parts) or answer
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {str(exc)[:160]}")
        answer, status = None, "error"
    s.finish(answer, status, sum(CALLS.values()), lacks=LACKS if DEFAULT_SETTINGS else None)
    run["note"] = (
        f"Model calls per agent: {dict(CALLS)}; the workflow's steps are field_survey (ParallelAgent of "
        "meter_reader and outage_watch) then case_writer."
    )


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):  # noqa: B007 (the global the tools record into)
        with tracer.start_as_current_span("handle_request"):
            await serve(request)
        provider.force_flush()


asyncio.run(main())
