"""A Semantic Kernel `ConcurrentOrchestration` of two ChatCompletionAgents with plugins, both answering the same
request at once, with SK's own GenAI diagnostics (sensitive content on).

coverage_reviewer (plugin `Coverage`: lookup_policy) and payout_clerk (plugin `Disbursement`: file_claim,
issue_payout, which fails, and delete_account) run in an `InProcessRuntime`; the orchestration sends the request
to both and its result is their two answers, which an `output_transform` joins one line per agent. Tools reach
the model as `<Plugin>-<function>`. The two agents run at once; each agent's HTTP client lets its model requests
reach the scripted model in a fixed interleaving (the scenario's `ORDER`), so that each call gets its scripted
reply: the agents still overlap, only which of two concurrent requests goes first is pinned. SK reads its switches
at import: SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS(_SENSITIVE); chat content is written as Python
log records, sent here through an OTLP LoggerProvider. Each request is wrapped in a `handle_request` span. Run as
../semantic-kernel-concurrent-default/capture.py (DEFAULT_SETTINGS=True), only the non-sensitive switch is on and
every run's ground truth lists in `lacks` what the spans then cannot carry.

The ground truth is the request run of the orchestration, entered at its first member (as for the other
concurrent captures): the user's request, the joined answer (which no span carries, each agent's own answer being
all the trace shows: the run lacks `output`), both agents' model calls (counted at each agent's HTTP client, a
retry not counted again), the tool calls as the model named them (recorded by the functions) in the order they
ran, and no handoff (fanning out to parallel workers transfers no control). In `clerk_failure` the model backend
fails during payout_clerk's second turn, after coverage_reviewer has answered, and the orchestration's result
raises.
"""

import asyncio
import os

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
DEFAULT_SETTINGS = globals().get("DEFAULT_SETTINGS", False)  # the -default source: the sensitive switch stays off
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = str(not DEFAULT_SETTINGS).lower()

import httpx2  # noqa: E402
from claims import desk_tools  # noqa: E402
from client import Scenario, failure, text, tool  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent, ConcurrentOrchestration  # noqa: E402
from semantic_kernel.connectors.ai import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.contents import AuthorRole, ChatMessageContent  # noqa: E402
from semantic_kernel.functions import KernelPlugin, kernel_function  # noqa: E402
from sk_orchestration import invoke, qualified, qualified_replies  # noqa: E402
from telemetry import each_handled, exported  # noqa: E402

tracer = exported("claims-panel", content_logger="semantic_kernel")  # SK's GenAI content events

s: Scenario  # the scenario being captured; the functions record into its request run
TOOLS = desk_tools(lambda: s)
COVERAGE = ("lookup_policy",)
DISBURSEMENT = ("file_claim", "issue_payout", "delete_account")
PLUGIN = {**dict.fromkeys(COVERAGE, "Coverage"), **dict.fromkeys(DISBURSEMENT, "Disbursement")}
acted: list[str] = []  # the agent behind each model call of the request in progress, in the order sent
turn = {"order": [], "next": 0}  # the scenario's interleaving of the two agents' model calls
moved: asyncio.Condition  # notified when a model call's response arrives
LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]  # what spans without content lack


def first_try(request: httpx2.Request) -> bool:
    return request.headers.get("x-stainless-retry-count", "0") == "0"  # a client retry is not another call


def pinned_http(owner: str) -> httpx2.AsyncClient:
    """An HTTP client whose model requests wait for `owner`'s turn in the scenario's order, counted in `acted`."""

    async def wait_turn(request: httpx2.Request) -> None:
        if not first_try(request):
            return
        async with moved:
            await asyncio.wait_for(moved.wait_for(lambda: turn["order"][turn["next"] :][:1] == [owner]), timeout=60)
            acted.append(owner)

    async def pass_turn(response: httpx2.Response) -> None:
        if first_try(response.request):
            async with moved:
                turn["next"] += 1
                moved.notify_all()

    return httpx2.AsyncClient(event_hooks={"request": [wait_turn], "response": [pass_turn]})


def plugin(name: str, functions: tuple[str, ...]) -> KernelPlugin:
    return KernelPlugin(name=name, functions=[kernel_function(TOOLS[f]) for f in functions])


def agent(name: str, description: str, plugins: list[KernelPlugin]) -> ChatCompletionAgent:
    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], http_client=pinned_http(name))
    return ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=client),
        name=name,
        description=description,
        instructions=f"You are the insurer's {name.replace('_', ' ')}. {description}",
        plugins=plugins,
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10),
    )


def joined(answers: list[ChatMessageContent]) -> ChatMessageContent:
    """The orchestration's answers, one line per agent, as the one reply the customer gets."""
    return ChatMessageContent(role=AuthorRole.ASSISTANT, content="\n".join(f"{a.name}: {a.content}" for a in answers))


def orchestration() -> ConcurrentOrchestration:
    members = [
        agent("coverage_reviewer", "Checks what a policy covers.", [plugin("Coverage", COVERAGE)]),
        agent("payout_clerk", "Files claims, pays them out, closes accounts.", [plugin("Disbursement", DISBURSEMENT)]),
    ]
    return ConcurrentOrchestration(members=members, output_transform=joined)


async def run(request: str) -> None:
    global moved
    truth = s.run("coverage_reviewer", request)
    acted.clear()
    moved = asyncio.Condition()
    turn.update(order=ORDER[s.name], next=0)
    output, status = await invoke(orchestration(), request)
    qualified(truth["tool_calls"], PLUGIN)
    # the joined answer is on no span (each agent's own answer is): the trace cannot carry the output
    s.finish(
        output, status, len(acted), lacks=LACKS if DEFAULT_SETTINGS else ["output"] if output is not None else None
    )
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note="The request run is the concurrent orchestration's, with both agents' model and tool calls; model "
        f"calls, in the order sent: {acted}.",
    )


R, C = "coverage_reviewer", "payout_clerk"
ORDER = {  # which agent's model request goes first, call by call (the agents run at once)
    "claim_filed": [R, C, R, C],
    "payout_error": [R, C, R, C],
    "close_account": [R, C, C],
    "clerk_failure": [R, C, R, C],
}
SCENARIOS = {
    "claim_filed": (
        "My bike was stolen; policy P-310. File a claim for 900 euros.",
        [
            tool("lookup_policy", {"policy_id": "P-310"}),
            tool("file_claim", {"policy_id": "P-310", "amount": 900}),
            text("P-310 covers home contents up to 5000 EUR; the bike is covered."),
            text("Claim CL-4471 is filed on P-310 for 900 EUR."),
        ],
    ),
    "payout_error": (
        "Is claim CL-4471 on policy P-310 covered? Pay it out.",
        [
            tool("lookup_policy", {"policy_id": "P-310"}),
            tool("issue_payout", {"claim_id": "CL-4471"}),
            text("P-310 is active and covers the claim."),
            text("The payout of CL-4471 could not be made: the payout system is locked for audit."),
        ],
    ),
    "close_account": (
        "Cancel everything and close my account, customer u-4410.",
        [
            text("Nothing to review on the coverage side for a closure."),
            tool("delete_account", {"user_id": "u-4410"}),
            text("Account u-4410 is closed."),
        ],
    ),
    "clerk_failure": (
        "Check policy P-310 and file a claim for 900 euros on it.",
        [
            tool("lookup_policy", {"policy_id": "P-310"}),
            tool("file_claim", {"policy_id": "P-310", "amount": 900}),
            text("P-310 is active, home contents up to 5000 EUR."),
            failure(503, "model backend overloaded"),
        ],
    ),
}


qualified_replies(SCENARIOS, PLUGIN)  # the scripted calls under the names SK gives the model


async def main() -> None:
    global s
    for s, request in each_handled(SCENARIOS, tracer):  # noqa: B007 (the global the functions record into)
        await run(request)


asyncio.run(main())
