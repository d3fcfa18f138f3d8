"""A Haystack Agent whose tools include another Agent (`AgentTool`), traced by Haystack's own OpenTelemetry tracer
(`opentelemetry-haystack`'s `OpenTelemetryTracer` given to `haystack.tracing.enable_tracing`, content tracing on).

intake_clerk, the entry agent, is a component of a one-component Pipeline (a web service's shape, and where the
component's name stands on the trace); it files claims (lookup_policy, file_claim), quotes premiums
(premium_quote) and delegates the rest to settlement_officer through the agent tool `ask_settlement_officer`.
settlement_officer is an Agent of its own with claim_status, issue_payout (fails) and delete_account. Both run
OpenAIChatGenerator on the scripted model (retries off). A failing tool does not stop an agent (its default): the
model gets the failure as the tool's result. Each request is wrapped in a `handle_request` span. Run as
../haystack-agent-tools-default/capture.py (DEFAULT_SETTINGS=True), content tracing stays off, and every run's
ground truth lists in `lacks` what that trace cannot carry.

The ground truth is one request run per request, entered at intake_clerk: every agent's model calls (counted at
the HTTP client), the tool calls in the order they started (the agent tool with the arguments the model gave and
the inner agent's answer, then that agent's own calls, recorded by the tools), no handoff, and the pipeline's
answer. In `delegate_failure` the backend fails during settlement_officer's turn: the agent tool fails, and so
does intake_clerk's next model call, so the pipeline raises.
"""

import os
from collections import Counter
from typing import Any

from client import Scenario
from haystack import Pipeline, tracing
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import AgentTool, create_tool_from_function
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer
from insurance import delegation_scenarios, run_recorded
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "claims-intake"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("haystack")))
DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # content tracing left off, Haystack's default
tracing.tracer.is_content_tracing_enabled = not DEFAULT_SETTINGS  # or HAYSTACK_CONTENT_TRACING_ENABLED=true
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what the default trace cannot carry
tracer = trace.get_tracer("claims-intake")
s: Scenario  # the scenario being captured; the tools record into its request run
model_calls: Counter[str] = Counter()
DELEGATE = "ask_settlement_officer"


def generator(owner: str) -> OpenAIChatGenerator:
    def count(request: Any) -> None:
        model_calls[owner] += 1

    return OpenAIChatGenerator(
        model="gpt-4o-mini",
        api_base_url=os.environ["OPENAI_BASE_URL"],
        max_retries=0,
        http_client_kwargs={"event_hooks": {"request": [count]}},
    )


def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return run_recorded(s, "lookup_policy", {"policy_id": policy_id})


def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return run_recorded(s, "file_claim", {"policy_id": policy_id, "amount": amount})


def claim_status(claim_id: str) -> str:
    """Where a claim stands."""
    return run_recorded(s, "claim_status", {"claim_id": claim_id})


def premium_quote(age: int) -> str:
    """The yearly premium for a customer of that age."""
    return run_recorded(s, "premium_quote", {"age": age})


def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    return run_recorded(s, "issue_payout", {"amount": amount})


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return run_recorded(s, "delete_account", {"user_id": user_id})


def agent_tool() -> AgentTool:
    """settlement_officer as a tool; its function records the call when it starts and the answer when it ends."""
    officer = Agent(
        chat_generator=generator("settlement_officer"),
        tools=[create_tool_from_function(f) for f in (claim_status, issue_payout, delete_account)],
        system_prompt="You are the settlement officer: claim statuses, payouts and account closures.",
    )
    wrapped = AgentTool(
        agent=officer,
        name=DELEGATE,
        description="Ask the settlement officer about claim statuses, payouts and accounts.",
    )
    run_officer = wrapped.function

    def recorded(**arguments: Any) -> Any:
        entry: dict[str, Any] = {"name": DELEGATE, "arguments": arguments, "result": None, "error": True}
        s.runs[-1]["tool_calls"].append(entry)
        result = run_officer(**arguments)
        entry.update(result=result["last_message"].text, error=False)
        return result

    wrapped.function = recorded
    return wrapped


intake = Agent(
    chat_generator=generator("intake_clerk"),
    tools=[*(create_tool_from_function(f) for f in (lookup_policy, file_claim, premium_quote)), agent_tool()],
    system_prompt="You are the intake clerk of an insurer: file claims, ask the settlement officer for the rest.",
)
pipeline = Pipeline()
pipeline.add_component("intake_clerk", intake)


def run(request: str) -> None:
    truth = s.run("intake_clerk", request)
    model_calls.clear()
    try:
        result = pipeline.run({"intake_clerk": {"messages": [ChatMessage.from_user(request)]}})
        output, status = result["intake_clerk"]["last_message"].text, "ok"
    except Exception as exc:
        print(f"   run failed as scripted: {type(exc).__name__}: {str(exc)[:160]}")
        output, status = None, "error"
    s.finish(output, status, sum(model_calls.values()), lacks=LACKS if DEFAULT_SETTINGS else None)
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is intake_clerk's, with settlement_officer called as a tool; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in model_calls.items())
        + ".",
    )


def as_messages(reply: dict[str, Any]) -> dict[str, Any]:
    """A scripted reply whose call to the agent tool asks in the tool's own schema: one user message."""
    calls = [
        {**call, "arguments": {"messages": [{"role": "user", "content": call["arguments"]["question"]}]}}
        if call["name"] == DELEGATE
        else call
        for call in reply.get("tool_calls", [])
    ]
    return {**reply, "tool_calls": calls} if calls else reply


for name, (request, replies) in delegation_scenarios(DELEGATE).items():
    with Scenario(name, [as_messages(r) for r in replies], nested_runs_allowed=True) as s:
        with tracer.start_as_current_span("handle_request"):
            run(request)
        provider.force_flush()
