"""Microsoft Agent Framework's group chat orchestration (`GroupChatBuilder`) led by a moderator agent, with the
framework's own GenAI and workflow spans.

claims_moderator, an Agent given to the builder as `orchestrator_agent`, answers each round with the framework's
structured decision (`terminate`, `reason`, `next_speaker`, `final_message`): it gives the floor to policy_desk
(lookup_policy, file_claim) or payout_desk (issue_payout, which fails, and delete_account), and ends the chat with
the final message the user gets. Agent Framework instruments itself (on by default) through the global
OpenTelemetry providers, set here to SDK providers exporting OTLP/HTTP protobuf (traces, and log records);
message content is turned on the documented way, ENABLE_SENSITIVE_DATA=true. Each request is wrapped in a
`handle_request` span.

The ground truth is the request run of the group chat, entered at its moderator: the user's request, the
moderator's final message, every model call made for it (the moderator's decisions and the speakers' turns,
counted by a chat middleware on each agent), the tool calls (recorded by the tools) in the order they ran, and a
handoff wherever the floor passes from one speaker to another (from the moderator's decisions, as for AutoGen's
selector group chat). In `payout_failure` the model backend fails during payout_desk's turn, the second speaker's.
"""

import asyncio
import json
import os
from itertools import pairwise

os.environ["ENABLE_SENSITIVE_DATA"] = "true"

from agent_framework import Agent, chat_middleware
from agent_framework.openai import OpenAIChatCompletionClient
from agent_framework_orchestrations import GroupChatBuilder
from client import Scenario, failure, text, tool
from insurance import REQUESTS, run_recorded
from opentelemetry import _logs, trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

resource = Resource.create({"service.name": "claims-roundtable"})
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
log_provider = LoggerProvider(resource=resource)
log_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
_logs.set_logger_provider(log_provider)
tracer = trace.get_tracer("claims-roundtable")

s: Scenario  # the scenario being captured; the tools record into its request run
CALLS: dict[str, int] = {}  # model calls each agent made, counted by its chat middleware


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
    return GroupChatBuilder(
        participants=[
            make_agent("policy_desk", "You read policies and file claims.", [lookup_policy, file_claim]),
            make_agent("payout_desk", "You pay out claims and close accounts.", [issue_payout, delete_account]),
        ],
        orchestrator_agent=make_agent("claims_moderator", "You moderate the claims desks and answer the customer.", []),
        max_rounds=8,
    ).build()


def final_message(outputs) -> str | None:
    """The group chat's answer: the text of the last message of its last output."""
    last = outputs[-1] if outputs else None
    messages = getattr(last, "messages", last if isinstance(last, list) else [last])
    texts = [m.text for m in messages if getattr(m, "text", None)]
    return texts[-1] if texts else None


async def run(request: str, speakers: list[str]) -> None:
    truth = s.run("claims_moderator", request)
    CALLS.clear()
    try:
        events = await workflow().run(request)
        output, status = final_message(events.get_outputs()), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    s.finish(output, status, sum(CALLS.values()))
    truth.update(
        handoffs=[{"from": a, "to": b} for a, b in pairwise(speakers) if a != b],
        nested_runs_allowed=True,
        note="The request run is the moderated group chat's, with every model call made for it; model calls per "
        "agent: " + ", ".join(f"{name} {n}" for name, n in CALLS.items()) + f"; the speakers in turn: {speakers}.",
    )


def floor(speaker: str) -> dict:
    """The moderator's decision giving the floor to `speaker`."""
    decision = {"terminate": False, "reason": f"{speaker} handles this", "next_speaker": speaker, "final_message": None}
    return text(json.dumps(decision))


def close(message: str) -> dict:
    """The moderator's decision ending the chat with `message` for the customer."""
    return text(json.dumps({"terminate": True, "reason": "answered", "next_speaker": None, "final_message": message}))


SCENARIOS = {
    "claim_chat": (
        REQUESTS["happy"][0][0],
        ["policy_desk"],
        [
            floor("policy_desk"),
            tool("lookup_policy", {"policy_id": "PX-1"}),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 filed on PX-1 for 900 EUR; the excess is 150 EUR."),
            close("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "claim_then_payout_error": (
        "File a 2400 euro claim on policy PX-1 and pay it out now.",
        ["policy_desk", "payout_desk"],
        [
            floor("policy_desk"),
            tool("file_claim", {"policy_id": "PX-1", "amount": 2400}),
            text("Claim C-1 filed on PX-1 for 2400 EUR."),
            floor("payout_desk"),
            tool("issue_payout", {"amount": 2400}),
            text("The payout failed: it exceeds the payout limit."),
            close("Claim C-1 is filed, but the 2400 EUR payout failed: it exceeds the payout limit."),
        ],
    ),
    "close_account": (
        REQUESTS["forbidden"][0][0],
        ["payout_desk"],
        [
            floor("payout_desk"),
            tool("delete_account", {"user_id": "u-314"}),
            text("Account u-314 deleted."),
            close("Your customer record u-314 has been erased."),
        ],
    ),
    "payout_failure": (
        "Check policy PX-1, then pay out 300 euros.",
        ["policy_desk", "payout_desk"],
        [
            floor("policy_desk"),
            tool("lookup_policy", {"policy_id": "PX-1"}),
            text("PX-1 is home cover with a 150 EUR excess."),
            floor("payout_desk"),
            failure(503, "model backend overloaded"),
        ],
    ),
}


async def main() -> None:
    global s
    for name, (request, speakers, replies) in SCENARIOS.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with tracer.start_as_current_span("handle_request"):
                await run(request, speakers)
            provider.force_flush()
            log_provider.force_flush()


asyncio.run(main())
