"""Insurance-claims scenarios for capture scripts (a desk of their own beside `claims.py`'s), with tool and agent
names no older capture uses (the second hold-out set): each is the user requests served in one trace and the
model's scripted replies, in `client.py`'s reply form.

The tools: lookup_policy(policy_id) (PX-1, PX-2), file_claim(policy_id, amount), issue_payout(amount) (fails:
"payout limit exceeded"), claim_status(claim_id) (C-1, C-2), delete_account(user_id), premium_quote(age).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import Scenario, failure, text, tool, tools
from hotel import call_recorded, chat_schemas


def lookup_policy(policy_id: str) -> str:
    """The cover and excess of an insurance policy."""
    return {"PX-1": "home cover, excess 150 EUR", "PX-2": "travel cover, excess 50 EUR"}[policy_id]


def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return f"claim C-1 filed on {policy_id} for {amount} EUR"


def issue_payout(amount: int) -> str:
    """Pay a settled claim out to the customer."""
    raise RuntimeError("payout limit exceeded")


def claim_status(claim_id: str) -> str:
    """Where a claim stands."""
    return {"C-1": "under review", "C-2": "paid on 3 March"}[claim_id]


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


def premium_quote(age: int) -> str:
    """The yearly premium for a customer of that age."""
    return f"{300 + 4 * age} EUR a year"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (lookup_policy, file_claim, issue_payout, claim_status, delete_account, premium_quote)
}
SCHEMAS = chat_schemas(FUNCTIONS)  # the tools as Chat Completions `tools`, for hand-written loops

Scenarios = dict[str, tuple[list[str], list[dict[str, Any]]]]
REQUESTS: Scenarios = {
    "happy": (
        ["My kitchen flooded; file a 900 euro claim on policy PX-1."],
        [
            tool("lookup_policy", {"policy_id": "PX-1"}),
            tool("file_claim", {"policy_id": "PX-1", "amount": 900}),
            text("Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR."),
        ],
    ),
    "forbidden": (
        ["Cancel everything and erase my customer record, id u-314."],
        [tool("delete_account", {"user_id": "u-314"}), text("Your customer record u-314 has been erased.")],
    ),
    "tool_error": (
        ["Pay out my settled 2400 euro claim now."],
        [tool("issue_payout", {"amount": 2400}), text("The payout failed: it exceeds the payout limit.")],
    ),
    "parallel": (
        ["How are claims C-1 and C-2 doing?"],
        [
            tools(("claim_status", {"claim_id": "C-1"}), ("claim_status", {"claim_id": "C-2"})),
            text("C-1 is under review; C-2 was paid on 3 March."),
        ],
    ),
    "agent_error": (
        ["What does policy PX-2 cover abroad?"],
        [tool("lookup_policy", {"policy_id": "PX-2"}), failure(503, "model backend overloaded")],
    ),
    "two_requests": (
        ["What would I pay a year at 40?", "Is claim C-2 settled?"],
        [
            tool("premium_quote", {"age": 40}),
            text("At 40 the premium is 460 EUR a year."),
            tool("claim_status", {"claim_id": "C-2"}),
            text("Yes, C-2 was paid on 3 March."),
        ],
    ),
}


def run_recorded(scenario: Scenario, name: str, arguments: dict[str, Any]) -> str:
    """Run an insurance tool and record in the scenario's ground truth what it received and returned, or that it
    failed (re-raised, for the framework to handle)."""
    return call_recorded(FUNCTIONS, scenario, name, arguments)


def delegation_scenarios(delegate: str) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """One request each, for an entry agent with the claims-filing tools that asks a second agent, through its
    tool `delegate`, about payouts, claim status and account closures: the request and the scripted replies."""
    return {
        "happy": (REQUESTS["happy"][0][0], REQUESTS["happy"][1]),
        "delegation": (
            "How are claims C-1 and C-2 doing? And what would I pay a year at 40?",
            [
                tool(delegate, {"question": "Status of claims C-1 and C-2"}),
                tool("claim_status", {"claim_id": "C-1"}),
                tool("claim_status", {"claim_id": "C-2"}),
                text("C-1 is under review; C-2 was paid on 3 March."),
                tool("premium_quote", {"age": 40}),
                text("C-1 is under review and C-2 was paid on 3 March; at 40 the premium is 460 EUR a year."),
            ],
        ),
        "delegate_tool_error": (
            REQUESTS["tool_error"][0][0],
            [
                tool(delegate, {"question": "Pay out the customer's settled 2400 euro claim"}),
                tool("issue_payout", {"amount": 2400}),
                text("The payout failed: it exceeds the payout limit."),
                text("I could not pay it out: 2400 EUR exceeds the payout limit."),
            ],
        ),
        "forbidden_in_delegate": (
            REQUESTS["forbidden"][0][0],
            [
                tool(delegate, {"question": "Close the account of customer u-314"}),
                tool("delete_account", {"user_id": "u-314"}),
                text("Account u-314 is closed."),
                text("Your customer record u-314 has been erased."),
            ],
        ),
        "delegate_failure": (
            "Is claim C-2 settled?",
            [
                tool(delegate, {"question": "Is claim C-2 settled?"}),
                tool("claim_status", {"claim_id": "C-2"}),
                failure(503, "model backend overloaded"),
            ],
        ),
    }
