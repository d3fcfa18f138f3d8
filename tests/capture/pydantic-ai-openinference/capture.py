"""pydantic-ai delegation and programmatic hand-off traced by OpenInference's pydantic-ai span processor.

pydantic-ai's own instrumentation (`Agent.instrument_all()`, default settings, content on) writes the spans;
openinference-instrumentation-pydantic-ai's `OpenInferenceSpanProcessor`, added to the SDK's TracerProvider before
the exporting processor, adds OpenInference attributes (span kinds, input/output values, flattened messages) to each
span as it ends. Spans go to OTLP/HTTP protobuf; each request is an application span `handle_request`.

Each request is served by two agents in turn. `claims_intake` (lookup_policy, file_claim) delegates to `underwriter`
(claim_status, premium_quote), a second agent run inside its `refer_to_underwriter` tool with the caller's usage,
whose answer is the tool's result. The application then hands the whole conversation to `settlement_desk`
(issue_payout, delete_account), pydantic-ai's programmatic hand-off, whose answer the customer gets. A failing tool
reports its failure to the model with `ModelRetry`.

The ground truth is one request run per user request, entered at claims_intake: the user's request, the answer the
user got (none when the request failed), every agent's model calls (a before-model-request hook) and tool calls in
the order they started. The delegation is recorded the way an agent called as a tool is: `refer_to_underwriter`
with the request it got and the underwriter's answer, then the underwriter's own calls. The move to settlement_desk
is application code continuing the conversation, no handoff (the convention of `pydantic-ai-handoff-logfire` and
the sequential captures). Each agent's own run is nested.
"""

import asyncio
import functools
import os

from client import Scenario, failure, text, tool, tools
from insurance import FUNCTIONS
from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai_count import counted
from telemetry import each_handled

provider = TracerProvider(resource=Resource.create({"service.name": "claims-service"}))
provider.add_span_processor(OpenInferenceSpanProcessor())
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
Agent.instrument_all()
tracer = trace.get_tracer("claims-service")
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"]))
RUN: dict  # the ground truth of the request being served


def agent(name: str, instructions: str, tool_names: list[str]) -> Agent:
    """An agent with insurance tools that record what they received and returned; a failure goes back to the
    model as a ModelRetry."""
    built = Agent(model, name=name, instructions=instructions, capabilities=[counted(lambda: RUN)])
    for tool_name in tool_names:
        built.tool_plain(recorded(FUNCTIONS[tool_name]))
    return built


def recorded(function):
    """The insurance tool, recording each call into the request's ground truth (same name, signature, docstring)."""

    @functools.wraps(function)
    def wrapper(**arguments):
        entry = {"name": function.__name__, "arguments": arguments, "result": None, "error": False}
        RUN["tool_calls"].append(entry)
        try:
            entry["result"] = function(**arguments)
        except RuntimeError as exc:
            entry["error"] = True
            raise ModelRetry(str(exc)) from exc
        return entry["result"]

    return wrapper


claims_intake = agent(
    "claims_intake",
    "You take insurance claims. Refer questions about claim status and premiums to the underwriter.",
    ["lookup_policy", "file_claim"],
)
underwriter = agent("underwriter", "You answer claim-status and premium questions.", ["claim_status", "premium_quote"])
settlement_desk = agent(
    "settlement_desk",
    "You settle what intake prepared: payouts and account closures. Answer the customer.",
    ["issue_payout", "delete_account"],
)


@claims_intake.tool
async def refer_to_underwriter(ctx: RunContext, question: str) -> str:
    """Ask the underwriter about claim status or premiums."""
    entry = {"name": "refer_to_underwriter", "arguments": {"question": question}, "result": None, "error": False}
    RUN["tool_calls"].append(entry)
    try:
        entry["result"] = (await underwriter.run(question, usage=ctx.usage)).output
    except Exception:
        entry["error"] = True
        raise
    return entry["result"]


SCENARIOS = {
    "happy": (
        "My kitchen flooded; file a 900 euro claim on policy PX-1.",
        [
            tool("lookup_policy", {"policy_id": "PX-1"}),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 is filed on PX-1 for 900 EUR (excess 150 EUR); nothing to settle yet."),
            text("Your claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR and it is now under review."),
        ],
    ),
    "delegation": (
        "How are claims C-1 and C-2 doing? And what would I pay a year at 40?",
        [
            tool("refer_to_underwriter", {"question": "Status of claims C-1 and C-2, and the premium at age 40"}),
            tools(("claim_status", {"claim_id": "C-1"}), ("claim_status", {"claim_id": "C-2"})),
            tool("premium_quote", {"age": 40}),
            text("C-1 is under review; C-2 was paid on 3 March; at 40 the premium is 460 EUR a year."),
            text("The underwriter reports C-1 under review, C-2 paid on 3 March, 460 EUR a year at 40."),
            text("C-1 is still under review and C-2 was paid on 3 March; at 40 you would pay 460 EUR a year."),
        ],
    ),
    "tool_error": (
        "Pay out my settled 2400 euro claim now.",
        [
            text("The customer asks for the payout of a settled 2400 EUR claim."),
            tool("issue_payout", {"amount": 2400}),
            text("I could not pay out 2400 EUR: it exceeds the payout limit. An adjuster will contact you."),
        ],
    ),
    "forbidden": (
        "Cancel everything and erase my customer record, id u-314.",
        [
            tool("lookup_policy", {"policy_id": "PX-2"}),
            text("Customer u-314 holds PX-2 (travel cover) and wants the record erased."),
            tool("delete_account", {"user_id": "u-314"}),
            text("Your customer record u-314 has been erased."),
        ],
    ),
    "delegate_failure": (
        "Is claim C-2 settled?",
        [
            tool("refer_to_underwriter", {"question": "Is claim C-2 settled?"}),
            tool("claim_status", {"claim_id": "C-2"}),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def serve(s: Scenario, request: str) -> None:
    """One request: claims_intake (delegating to underwriter), then settlement_desk continuing its conversation."""
    global RUN
    RUN = s.run("claims_intake", request)
    RUN.update(handoffs=[], nested_runs_allowed=True, llm_calls=0)
    try:
        intake = await claims_intake.run(request)
        settled = await settlement_desk.run(
            "Settle what the customer asked, as intake prepared above.", message_history=intake.all_messages()
        )
        output, status = settled.output, "ok"
    except Exception as exc:
        print(f"   request failed as scripted: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, RUN["llm_calls"])


async def main() -> None:
    for s, request in each_handled(SCENARIOS, tracer):
        await serve(s, request)


asyncio.run(main())
