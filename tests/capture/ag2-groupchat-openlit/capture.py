"""An AG2 (the AutoGen 0.2 line) `GroupChat` of three agents whose `GroupChatManager` picks each next speaker with
its model (`speaker_selection_method="auto"`), traced by OpenLIT (`openlit.init`: its AG2 and OpenAI
instrumentations, message content on by default).

The grid desk of `../grid.py`: dispatch_desk (meter_reading), field_crew (open_fault_ticket) and accounts_clerk
(issue_credit_note, which fails, tariff_quote, delete_account) are `ConversableAgent`s, each registered as caller
and executor of its own tools, so the group chat hands a tool call to the agent that made it without asking the
model. A customer `UserProxyAgent`, no member of the chat, opens it with the request; before every other turn the
manager's speaker selection asks the model which agent speaks next (answered with the agent's name). The chat ends
on the first agent message that is text (the answer). Each request runs inside a `handle_request` span.

The ground truth is the request run of the group chat: the customer's request, the answering agent's text, every
model call made for it (the speaker selection's and the agents', counted at the HTTP client; retries are off),
the tool calls as the tools ran them, and the handoffs: each change of the agent whose model was called, in order
(the selection's calls not counted as an agent). In `crew_failure` the model backend fails inside field_crew's
turn and `initiate_chat` raises.
"""

import os
import warnings
from itertools import pairwise

import grid
import httpx
from autogen import ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent, register_function
from client import Scenario, each, failure, text, tool
from hotel import recorded_tools
from telemetry import flush, traced

warnings.filterwarnings("ignore", category=DeprecationWarning)
tracer = traced("grid-desk")

S: Scenario  # the scenario being captured; the tools record into its request run
TOOLS = recorded_tools(grid.FUNCTIONS, lambda: S)
SELECTOR = "speaker_selection"
acted: list[str] = []  # whose model each model call of the request in progress was


class CountingClient(httpx.Client):
    """An HTTP client AG2 may deep-copy with its config (AG2's documented way: the copy is the client itself)."""

    def __deepcopy__(self, memo: dict) -> "CountingClient":
        return self


def llm_config(owner: str) -> dict:
    """A Chat Completions config on the scripted model whose HTTP client notes each call as `owner`'s."""

    def count(request: httpx.Request) -> None:
        acted.append(owner)

    entry = {
        "model": "gpt-4o-mini",
        "api_key": os.environ["OPENAI_API_KEY"],
        "base_url": os.environ["OPENAI_BASE_URL"],
        "max_retries": 0,
        "http_client": CountingClient(event_hooks={"request": [count]}),
    }
    return {"config_list": [entry], "cache_seed": None}


DESKS = {
    "dispatch_desk": ("Reads meters and says which desk should act.", ["meter_reading"]),
    "field_crew": ("Opens field-service tickets for meter faults.", ["open_fault_ticket"]),
    "accounts_clerk": ("Credits accounts, quotes tariffs and closes accounts.", list(grid.FUNCTIONS)[2:]),
}


def is_answer(message: dict) -> bool:
    """A desk's text message, no tool request nor tool result: the chat's answer."""
    return (
        message.get("name") in DESKS
        and bool(message.get("content"))
        and not message.get("tool_calls")
        and not message.get("tool_responses")
    )


def group() -> GroupChatManager:
    agents = []
    for name, (duty, tools) in DESKS.items():
        agent = ConversableAgent(
            name,
            system_message=f"You are the grid operator's {name.replace('_', ' ')}. {duty}",
            description=duty,
            llm_config=llm_config(name),
            human_input_mode="NEVER",
        )
        for tool_name in tools:
            function = TOOLS[tool_name]
            register_function(function, caller=agent, executor=agent, description=function.__doc__)
        agents.append(agent)
    chat = GroupChat(agents=agents, messages=[], max_round=12, speaker_selection_method="auto")
    return GroupChatManager(chat, llm_config=llm_config(SELECTOR), is_termination_msg=is_answer)


def run(request: str) -> None:
    acted.clear()
    truth = S.run("dispatch_desk", request)
    customer = UserProxyAgent("customer", human_input_mode="NEVER", code_execution_config=False)
    manager = group()
    try:
        customer.initiate_chat(manager, message=request, max_turns=1)
        answers = [m for m in manager.groupchat.messages if is_answer(m)]
        output, status = answers[-1]["content"], "ok"
    except Exception as exc:
        print(f"   group chat failed: {type(exc).__name__}: {exc}")
        output, status = None, "error"
    turns = [owner for owner in acted if owner != SELECTOR]
    S.finish(output, status, len(acted))
    truth.update(
        agent_name=turns[0],
        handoffs=[{"from": a, "to": b} for a, b in pairwise(turns) if a != b],
        nested_runs_allowed=True,
        note="The request run is the group chat's, with every model call made for it: the manager's speaker "
        f"selection (one before each agent turn that is not a tool execution) and the agents'; by whom: {acted}.",
    )


def turns(*steps: tuple[str, list[dict]]) -> list[dict]:
    """The scripted replies of a chat: before each agent's turn the selection names it, then its replies."""
    return [reply for desk, replies in steps for reply in (text(desk), *replies)]


SCENARIOS = {
    "fault_reported": (
        "My meter M-118 shows nothing on the display; can someone come and look?",
        turns(
            ("dispatch_desk", [tool("meter_reading", {"meter_id": "M-118"})]),
            ("field_crew", [tool("open_fault_ticket", {"meter_id": "M-118", "fault": "blank display"})]),
            (
                "field_crew",
                [text("Meter M-118 last read 40213 kWh; ticket FT-7781 is open, an engineer comes on Tuesday.")],
            ),
        ),
    ),
    "credit_refused": (
        "You overcharged account A-5512 by 40 euros; credit it back please.",
        turns(
            ("accounts_clerk", [tool("issue_credit_note", {"account": "A-5512", "amount": 40})]),
            ("accounts_clerk", [text("Sorry, I could not credit account A-5512: the billing engine is locked.")]),
        ),
    ),
    "account_closed": (
        "Read my meter M-207 one last time, then delete my energy account, customer u-2290.",
        turns(
            ("dispatch_desk", [tool("meter_reading", {"meter_id": "M-207"})]),
            ("accounts_clerk", [tool("delete_account", {"user_id": "u-2290"})]),
            ("accounts_clerk", [text("M-207 has sent no reading for 31 days; account u-2290 has been deleted.")]),
        ),
    ),
    "crew_failure": (
        "Meter M-118 is sparking, send someone now.",
        turns(
            ("dispatch_desk", [tool("meter_reading", {"meter_id": "M-118"})]),
            ("field_crew", [failure(503, "model backend overloaded")]),
        ),
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # noqa: B007 (S: the scenario the tools record into)
    with tracer.start_as_current_span("handle_request"):
        run(request)
    flush()
