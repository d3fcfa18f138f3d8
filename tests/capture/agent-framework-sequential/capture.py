"""Microsoft Agent Framework's sequential orchestration (`SequentialBuilder`) of three agents, with the framework's
own GenAI and workflow spans.

Every request goes through policy_reader (lookup_policy), then claim_filer (file_claim, issue_payout, which fails),
then customer_writer (delete_account), each agent taking one turn on the conversation so far; the workflow's
answer is the last agent's text. Agent Framework instruments itself (on by default) through the global
OpenTelemetry providers, set here to SDK providers exporting OTLP/HTTP protobuf (traces, and log records);
message content is turned on the documented way, ENABLE_SENSITIVE_DATA=true. Each request is wrapped in a
`handle_request` span. Run as ../agent-framework-sequential-default/capture.py (DEFAULT_SETTINGS=True), sensitive
data stays off, and every run's ground truth lists in `lacks` what that trace cannot carry.

The ground truth is the request run of the workflow, entered at its first agent: the user's request, the last
agent's answer, every agent's model calls (counted by a chat middleware on each agent), the tool calls (recorded
by the tools) in the order they ran, and no handoff (moving from one step of the sequence to the next is the
workflow's, not a handoff). In `filer_failure` the model backend fails during claim_filer's turn, the second
step, and the workflow raises.
"""

import asyncio
import os

DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)
if not DEFAULT_SETTINGS:
    os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from agent_framework import Agent, chat_middleware  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402
from agent_framework_orchestrations import SequentialBuilder  # noqa: E402
from client import Scenario, failure, text, tool  # noqa: E402
from insurance import REQUESTS, run_recorded  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

resource = Resource.create({"service.name": "claims-line"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
log_provider = LoggerProvider(resource=resource)
log_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
_logs.set_logger_provider(log_provider)
tracer = trace.get_tracer("claims-line")

s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls each agent made, counted by its chat middleware
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry


def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return run_recorded(s, "lookup_policy", {"policy_id": policy_id})


def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    return run_recorded(s, "issue_payout", {"amount": amount})


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(s, "delete_account", {"user_id": user_id})


def counter(agent_name: str):
    @chat_middleware
    async def count(context, call_next):
        CALLS[agent_name] = CALLS.get(agent_name, 0) + 1
        await call_next()

    return count


def make_agent(name: str, instructions: str, tools: list) -> Agent:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"])
    return Agent(client, instructions, name=name, description=instructions, tools=tools, middleware=[counter(name)])


def workflow():
    return SequentialBuilder(
        participants=[
            make_agent("policy_reader", "You read the customer's policy when one is named.", [lookup_policy]),
            make_agent("claim_filer", "You file claims and pay them out.", [file_claim, issue_payout]),
            make_agent("customer_writer", "You close accounts and write the answer to the customer.", [delete_account]),
        ]
    ).build()


def last_text(output) -> str | None:
    """The workflow's answer: the text of the last assistant message the last agent's response (`AgentResponse`)
    holds."""
    messages = getattr(output, "messages", output if isinstance(output, list) else [output])
    texts = [m.text for m in messages if getattr(m, "role", None) == "assistant" and m.text]
    return texts[-1] if texts else None


async def run(request: str) -> None:
    truth = s.run("policy_reader", request)
    CALLS.clear()
    try:
        events = await workflow().run(request)
        outputs = events.get_outputs()
        output, status = (last_text(outputs[-1]) if outputs else None), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(CALLS.values()), lacks=LACKS if DEFAULT_SETTINGS else None)
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is the sequential workflow's, with every agent's model and tool calls; model calls "
        "per agent: " + ", ".join(f"{name} {n}" for name, n in CALLS.items()) + ".",
    )


NOTHING_TO_READ = text("No policy named; nothing to read.")
NOTHING_TO_FILE = text("Nothing to file.")
SCENARIOS = {
    "claim_filed": (
        REQUESTS["happy"][0][0],
        [
            tool("lookup_policy", {"policy_id": "PX-1"}),
            text("PX-1 is home cover with a 150 EUR excess."),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 filed on PX-1 for 900 EUR."),
            text("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "payout_error": (
        REQUESTS["tool_error"][0][0],
        [
            NOTHING_TO_READ,
            tool("issue_payout", {"amount": 2400}),
            text("The payout failed: it exceeds the payout limit."),
            text("Sorry, your 2400 EUR payout could not be made: it exceeds the payout limit."),
        ],
    ),
    "close_account": (
        REQUESTS["forbidden"][0][0],
        [
            NOTHING_TO_READ,
            NOTHING_TO_FILE,
            tool("delete_account", {"user_id": "u-314"}),
            text("Your customer record u-314 has been erased."),
        ],
    ),
    "filer_failure": (
        REQUESTS["happy"][0][0],
        [
            tool("lookup_policy", {"policy_id": "PX-1"}),
            text("PX-1 is home cover with a 150 EUR excess."),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    global s
    for name, (request, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(request)
            provider.force_flush()
            log_provider.force_flush()


asyncio.run(main())
