"""A smolagents `CodeAgent` managing a tool-calling agent, traced by openinference-instrumentation-smolagents.

`branch_librarian` (a `CodeAgent` on `OpenAIServerModel`, Chat Completions, not streamed, local Python executor)
acts by writing Python: it calls its tools `catalogue_search` and `place_hold`, and its managed agent
`membership_clerk` (a `ToolCallingAgent` with renew_card, waive_fine, which fails, and delete_account), as functions
in its code, and answers with `final_answer(...)` in code. The clerk answers through smolagents' `final_answer` tool
(its argument is the answer, not a tool call). Each request is wrapped in a `handle_request` span.

The ground truth is the request run of the librarian: the user's request, its answer, every agent's model calls
(one per action step in each agent's memory, planning off) and tool calls in the order they started: the managed
agent's call (what the librarian's code asked and got back, recorded around the agent's `__call__`) followed by the
clerk's own calls, which the tools record. In `clerk_backend_down` the model backend fails during the clerk's run
(and stays down for the librarian's next step): the request fails.
"""

import os

from client import Scenario, each, failure, text
from client import tool as reply
from managed_agents import Ledger, Managed, run_manager
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from smolagents import CodeAgent, OpenAIServerModel, tool
from telemetry import flush, traced

tracer = traced("library-branch", lambda: [SmolagentsInstrumentor()])
model = OpenAIServerModel(
    model_id="gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
)
S: Scenario  # the scenario being captured; every call goes into its request run
ledger = Ledger()  # what the managed agent did in the request being captured


@tool
def catalogue_search(title: str) -> str:
    """Find a book in the library's catalogue.

    Args:
        title: the book's title
    """
    return S.ran("catalogue_search", {"title": title}, f"B-4410 {title}, 2 copies, both on loan")


@tool
def place_hold(book_id: str, branch: str) -> str:
    """Put a hold on a book, for pickup at a branch.

    Args:
        book_id: the catalogue id of the book
        branch: the branch where the reader picks it up
    """
    return S.ran("place_hold", {"book_id": book_id, "branch": branch}, f"hold H-902 on {book_id}, pickup at {branch}")


@tool
def renew_card(member_id: str) -> str:
    """Renew a member's library card for a year.

    Args:
        member_id: the member's id
    """
    return S.ran("renew_card", {"member_id": member_id}, f"card of {member_id} renewed until 30 November next year")


@tool
def waive_fine(member_id: str, amount: int) -> str:
    """Waive a member's late-return fine.

    Args:
        member_id: the member's id
        amount: the fine to waive, in euros
    """
    return S.ran("waive_fine", {"member_id": member_id, "amount": amount}, error="fines ledger closed for audit")


@tool
def delete_account(user_id: str) -> str:
    """Delete a member's account.

    Args:
        user_id: the member's id
    """
    return S.ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


def librarian() -> CodeAgent:
    clerk = Managed(
        tools=[renew_card, waive_fine, delete_account],
        model=model,
        name="membership_clerk",
        description="Renews library cards, waives fines and closes member accounts.",
        verbosity_level=0,
        ledger=ledger,
    )
    return CodeAgent(
        tools=[catalogue_search, place_hold],
        model=model,
        managed_agents=[clerk],
        name="branch_librarian",
        verbosity_level=0,
    )


def code(source: str) -> dict:
    """One CodeAgent step as the model writes it: a thought, then the code in smolagents' default tags."""
    return text(f"Thought: I act in code.\n<code>\n{source}\n</code>")


def delegated(request: str, task: str, call: dict, clerk_answer: str, answer: str) -> tuple[str, list[dict]]:
    """A request the librarian's code hands to the clerk: the clerk makes one tool call and answers; the librarian
    then answers the user."""
    return request, [
        code(f"print(membership_clerk(task={task!r}))"),
        call,
        reply("final_answer", {"answer": clerk_answer}),
        code(f"final_answer({answer!r})"),
    ]


SCENARIOS = {
    "hold_placed": (
        "Put Dune on hold for me at the Riverside branch.",
        [
            code('print(catalogue_search(title="Dune"))'),
            code('print(place_hold(book_id="B-4410", branch="Riverside"))'),
            code('final_answer("Dune (B-4410) is on hold for you at Riverside, hold H-902.")'),
        ],
    ),
    "card_renewed": delegated(
        "My library card L-3307 runs out next week; please renew it.",
        "Renew the library card of member L-3307.",
        reply("renew_card", {"member_id": "L-3307"}),
        "Card L-3307 renewed until 30 November next year.",
        "Your card L-3307 is renewed until 30 November next year.",
    ),
    "fine_not_waived": delegated(
        "I returned a book late because I was in hospital; can you waive my 6 euro fine? Member L-3307.",
        "Waive the 6 EUR late fine of member L-3307.",
        reply("waive_fine", {"member_id": "L-3307", "amount": 6}),
        "The fine could not be waived: the fines ledger is closed for audit.",
        "Sorry, your fine cannot be waived right now: the fines ledger is closed for audit.",
    ),
    "close_account": delegated(
        "I am moving away; close my library account, member L-5120.",
        "Close the account of member L-5120.",
        reply("delete_account", {"user_id": "L-5120"}),
        "Account L-5120 deleted.",
        "Your library account L-5120 is closed.",
    ),
    "clerk_backend_down": (
        "Renew my library card L-3307, please.",
        [
            code('print(membership_clerk(task="Renew the library card of member L-3307."))'),
            reply("renew_card", {"member_id": "L-3307"}),
            failure(500, "model backend unavailable"),
        ],
    ),
}

for S, request in each(SCENARIOS, nested_runs_allowed=True):  # S: the scenario the tools record into
    with tracer.start_as_current_span("handle_request"):
        run_manager(librarian(), S, ledger, request)
    flush()
