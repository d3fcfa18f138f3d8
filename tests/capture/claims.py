"""Insurance-claims desk tools for capture scripts, with tool and agent names no other capture uses (the second
hold-out set of `HOLDOUT.md`): what each tool answers and how the ground truth records it.

The tools: lookup_policy(policy_id), file_claim(policy_id, amount), issue_payout(claim_id) (fails: "payout
system locked for audit"), delete_account(user_id), appraise_damage(item) (used by an appraiser agent).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from client import Scenario, failure, text, tool
from hotel import Scenarios, call_recorded


def lookup_policy(policy_id: str) -> str:
    """Look up an insurance policy by id."""
    return f"policy {policy_id}: home contents, cover 5000 EUR, active"


def file_claim(policy_id: str, amount: int) -> str:
    """File a claim against a policy."""
    return f"claim CL-4471 filed on {policy_id} for {amount} EUR"


def issue_payout(claim_id: str) -> str:
    """Pay out an approved claim."""
    raise RuntimeError("payout system locked for audit")


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


def appraise_damage(item: str) -> str:
    """Appraise the value of a damaged item."""
    return f"{item}: replacement value 1200 EUR"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (lookup_policy, file_claim, issue_payout, delete_account, appraise_damage)
}


def run_recorded(scenario: Scenario, name: str, arguments: dict[str, Any]) -> str:
    """Run a claims tool and record in the scenario's ground truth what it received and returned, or that it
    failed (re-raised, for the framework to handle)."""
    return call_recorded(FUNCTIONS, scenario, name, arguments)


Reply = dict[str, Any]


def desk_requests(
    to_claims: Reply, to_payouts: Reply, claims_to_payouts: Reply | None = None, answer: Callable[[str], Reply] = text
) -> Scenarios:
    """The requests of a three-desk team (reception, claims, payouts), given the replies that hand the customer
    to claims and to payouts (and from claims to payouts, where it differs) and how the last desk answers: a
    handoff with tools, a chain of two handoffs ending in a failing payout, an account closure, and the backend
    failing in claims' turn."""
    return {
        "claim_handoff": (
            ["My laptop was stolen; policy P-310. Please file a claim for 1200 euros."],
            [
                to_claims,
                tool("lookup_policy", {"policy_id": "P-310"}),
                tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
                answer("Claim CL-4471 is filed on policy P-310 for 1200 EUR."),
            ],
        ),
        "claim_then_payout_error": (
            ["File a 1200 euro claim on P-310 and pay it out right away."],
            [
                to_claims,
                tool("file_claim", {"policy_id": "P-310", "amount": 1200}),
                claims_to_payouts or to_payouts,
                tool("issue_payout", {"claim_id": "CL-4471"}),
                answer("Claim CL-4471 is filed, but the payout could not be made: the payout system is locked."),
            ],
        ),
        "close_account": (
            ["Close my account please, customer u-981."],
            [to_payouts, tool("delete_account", {"user_id": "u-981"}), answer("Account u-981 has been closed.")],
        ),
        "claims_failure": (
            ["Check policy P-310 for me."],
            [to_claims, tool("lookup_policy", {"policy_id": "P-310"}), failure(500, "model backend down")],
        ),
    }


def each_request(scenarios: Scenarios) -> Iterator[tuple[Scenario, str]]:
    """Open each scenario in turn (multi-agent: nested runs allowed) and give it with its one request; the loop's
    body runs the request and flushes the providers before the scenario closes."""
    for name, (requests, replies) in scenarios.items():
        with Scenario(name, replies, nested_runs_allowed=True) as scenario:
            (request,) = requests
            yield scenario, request


def desk_tools(current: Callable[[], Scenario]) -> dict[str, Callable[..., str]]:
    """The claims tools as typed, documented functions (what frameworks build tool schemas from), each recording
    what it received and returned into the scenario `current()` gives."""

    def lookup_policy(policy_id: str) -> str:
        """Look up an insurance policy by id."""
        return run_recorded(current(), "lookup_policy", {"policy_id": policy_id})

    def file_claim(policy_id: str, amount: int) -> str:
        """File a claim against a policy."""
        return run_recorded(current(), "file_claim", {"policy_id": policy_id, "amount": amount})

    def issue_payout(claim_id: str) -> str:
        """Pay out an approved claim."""
        return run_recorded(current(), "issue_payout", {"claim_id": claim_id})

    def delete_account(user_id: str) -> str:
        """Delete a customer's account."""
        return run_recorded(current(), "delete_account", {"user_id": user_id})

    return {f.__name__: f for f in (lookup_policy, file_claim, issue_payout, delete_account)}
