"""A BeeAI Framework claims switchboard: a `RequirementAgent` delegating to two other agents through `HandoffTool`s,
traced by openinference-instrumentation-beeai.

switchboard, the entry agent, quotes premiums itself (premium_quote) and delegates with custom-named handoff tools:
`brief_adjuster` to field_adjuster (lookup_policy, file_claim, issue_payout, which fails) and `summon_retention` to
retention_officer (delete_account). A HandoffTool runs its target agent on the task it was given (with the
conversation so far) and returns the target's answer to switchboard, which then answers the customer. All three
are RequirementAgents on BeeAI's OpenAI chat model (through LiteLLM) against the scripted model, with
`final_answer_as_tool=False` (a plain text reply is the agent's answer) and no model retries. A failing tool is
reported back to the model as the tool's error. Each request is wrapped in a `handle_request` span.

The ground truth is one request run per request, entered at switchboard: every agent's model calls (the chat
models' own `start` events), the tool calls the agents' tools really ran, in order, and switchboard's answer. A
HandoffTool, whatever BeeAI calls it, behaves as an agent called as a tool: switchboard's model asks for it, the
target runs inside it and its answer is the call's result, after which switchboard carries on; so each is a tool
call of the request (with the task it was given and the answer it returned), as `openai-agents-multi`'s
`agent_as_tool` records `Agent.as_tool`, and no handoff: control never left switchboard. In
`adjuster_failure` the model backend fails during field_adjuster's turn: the delegation fails, and so does
switchboard's next model call.
"""

import asyncio
import os
from typing import Any

from beeai_framework.adapters.openai import OpenAIChatModel
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.backend import ChatModel
from beeai_framework.emitter import Emitter, EventMeta
from beeai_framework.tools import tool
from beeai_framework.tools.handoff import HandoffTool
from client import Scenario, failure, text
from client import tool as call
from insurance import REQUESTS, run_recorded
from openinference.instrumentation.beeai import BeeAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "claims-switchboard"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
BeeAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("claims-switchboard")
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls = 0


@tool
def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return run_recorded(s, "lookup_policy", {"policy_id": policy_id})


@tool
def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


@tool
def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    return run_recorded(s, "issue_payout", {"amount": amount})


@tool
def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(s, "delete_account", {"user_id": user_id})


@tool
def premium_quote(age: int) -> str:
    """The yearly premium for a customer of that age."""
    return run_recorded(s, "premium_quote", {"age": age})


def model() -> OpenAIChatModel:
    return OpenAIChatModel(
        model_id="gpt-4o-mini", base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
    )


def count_model_call(data: Any, event: EventMeta) -> None:
    """A chat model's own `start` event, of any agent's model (an agent reached through a HandoffTool runs as a
    clone, with a clone of its model); a retry inside the call is not another call."""
    global model_calls
    model_calls += 1


Emitter.root().on(lambda event: event.name == "start" and isinstance(event.creator, ChatModel), count_model_call)


class Delegation(HandoffTool):
    """BeeAI's HandoffTool, recording the call it really was in the request's ground truth: asked with a task,
    answered with its target's answer (or failed with it), in the order the model asked."""

    def __init__(self, target: RequirementAgent, **options: Any) -> None:
        super().__init__(target, **options)
        self.target_name = target.meta.name

    async def _run(self, input: Any, options: Any, context: Any) -> Any:
        s.tool(self.name, input.model_dump() if hasattr(input, "model_dump") else input)
        recorded = s.runs[-1]["tool_calls"][-1]
        delegated.append(self.target_name)
        try:
            output = await super()._run(input, options, context)
        except Exception:
            recorded["error"] = True
            raise
        recorded["result"] = output.get_text_content()
        return output


delegated: list[str] = []


def agent(name: str, role: str, tools: list) -> RequirementAgent:
    return RequirementAgent(
        name=name,
        description=role,
        role=role,
        llm=model(),
        tools=tools,
        final_answer_as_tool=False,
    )


def switchboard() -> RequirementAgent:
    """The agents of one request (fresh memories)."""
    adjuster = agent(
        "field_adjuster",
        "Looks up policies, files claims and pays them out.",
        [lookup_policy, file_claim, issue_payout],
    )
    retention = agent("retention_officer", "Closes customer accounts.", [delete_account])
    return agent(
        "switchboard",
        "Answers insurance customers and delegates to the adjuster and the retention officer.",
        [
            premium_quote,
            Delegation(
                adjuster, name="brief_adjuster", description="Delegate claims and payouts to the field adjuster."
            ),
            Delegation(retention, name="summon_retention", description="Delegate account closures to retention."),
        ],
    )


async def run(request: str) -> None:
    truth = s.run("switchboard", request)
    truth["handoffs"] = []
    delegated.clear()
    global model_calls
    model_calls = 0
    try:
        result = await switchboard().run(request, max_retries_per_step=0, total_max_retries=0)
        output, status = result.last_message.text, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {str(exc)[:160]}")
        output, status = None, "error"
    s.finish(output, status, model_calls)
    truth.update(
        nested_runs_allowed=True,
        note="The request run is switchboard's, with the agents it reached through HandoffTools (each an agent "
        "called as a tool: its answer returned to switchboard, which carries on); the agents that acted: switchboard"
        + "".join(f", {name}" for name in delegated)
        + ".",
    )


def brief(task: str) -> dict[str, Any]:
    return call("brief_adjuster", {"task": task})


SCENARIOS = {
    "quote": (REQUESTS["two_requests"][0][0], REQUESTS["two_requests"][1][:2]),
    "claim_delegation": (
        REQUESTS["happy"][0][0],
        [
            brief("File a 900 EUR claim on policy PX-1 for a flooded kitchen."),
            *REQUESTS["happy"][1][:2],
            text("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
            text("Your claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "payout_error": (
        REQUESTS["tool_error"][0][0],
        [
            brief("Pay out the customer's settled 2400 EUR claim."),
            *REQUESTS["tool_error"][1],
            text("Sorry, the 2400 EUR payout failed: it exceeds the payout limit."),
        ],
    ),
    "close_account": (
        REQUESTS["forbidden"][0][0],
        [
            call("summon_retention", {"task": "Erase the customer record u-314."}),
            *REQUESTS["forbidden"][1],
            text("Your customer record u-314 has been erased."),
        ],
    ),
    "adjuster_failure": (
        REQUESTS["agent_error"][0][0],
        [
            brief("Tell me what policy PX-2 covers abroad."),
            call("lookup_policy", {"policy_id": "PX-2"}),
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


asyncio.run(main())
