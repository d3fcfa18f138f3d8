"""A LlamaIndex `AgentWorkflow` of three `FunctionAgent`s handing off to each other (`can_handoff_to`), traced by
OpenLIT (`openlit.init`: its LlamaIndex and OpenAI instrumentations, message content on by default).

`welcome_desk` hands a customer to `loss_assessor` or `payments_desk`, and `loss_assessor` to `payments_desk`,
through the workflow's own `handoff` tool, whose argument `to_agent` names the next agent. The tools are the
claims desk's of `../claims.py` (lookup_policy, file_claim, issue_payout, which fails, delete_account); the requests
are its `desk_requests`. The agents talk Chat Completions to the scripted model through `OpenAILike` (streamed, no
retries). Each request runs inside a `handle_request` span.

The ground truth is the request run of the workflow (`llamaindex_workflow.serve_request`): the user's request, the
last agent's answer, every agent's model calls (one `AgentInput` event each), the tool calls as the tools ran them,
and the handoffs from the workflow's own events. In `claims_failure` the model backend fails during the assessor's
turn and the workflow fails. OpenLIT writes no span for the workflow or its agents (its LlamaIndex instrumentation
needs the `llama-index` bundle and wraps no workflow agent even then): the trace is the model calls under
`handle_request`, every message on them.
"""

import asyncio

from claims import desk_requests, desk_tools, each_request
from client import Scenario, tool
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool
from llamaindex_llm import scripted_llm
from llamaindex_workflow import serve_request
from telemetry import flush, traced

tracer = traced("claims-desk")
s: Scenario  # the scenario whose request run the tools record into
TOOLS = {name: FunctionTool.from_defaults(f) for name, f in desk_tools(lambda: s).items()}
ENTRY = "welcome_desk"


def workflow() -> AgentWorkflow:
    llm = scripted_llm(max_retries=0)
    welcome = FunctionAgent(
        name=ENTRY,
        description="Greets insurance customers and sends them to the right desk.",
        llm=llm,
        tools=[],
        can_handoff_to=["loss_assessor", "payments_desk"],
        system_prompt="You greet customers and hand them to the loss assessor or the payments desk.",
    )
    assessor = FunctionAgent(
        name="loss_assessor",
        description="Looks up policies and files claims.",
        llm=llm,
        tools=[TOOLS["lookup_policy"], TOOLS["file_claim"]],
        can_handoff_to=["payments_desk"],
        system_prompt="You look up policies and file claims; payouts go to the payments desk.",
    )
    payments = FunctionAgent(
        name="payments_desk",
        description="Pays out claims and closes accounts.",
        llm=llm,
        tools=[TOOLS["issue_payout"], TOOLS["delete_account"]],
        can_handoff_to=[],
        system_prompt="You pay out approved claims and close customer accounts.",
    )
    return AgentWorkflow(agents=[welcome, assessor, payments], root_agent=ENTRY)


def hand(to: str, reason: str) -> dict:
    return tool("handoff", {"to_agent": to, "reason": reason})


SCENARIOS = desk_requests(
    to_claims=hand("loss_assessor", "The customer has a claim."),
    to_payouts=hand("payments_desk", "The customer needs the payments desk."),
)


async def main() -> None:
    global s
    for s, request in each_request(SCENARIOS):
        with tracer.start_as_current_span("handle_request"):
            await serve_request(s, workflow(), request, ENTRY)
        if s.runs[-1]["status"] == "error":
            # only model calls are on this trace: a tool's result stands only in the next model request, and a
            # request that failed records no messages, so the failed run's trace lacks the result it would show
            s.runs[-1]["lacks"] = ["tool_results"]
        flush()


asyncio.run(main())
