"""Parcel-shipping desk tools for capture scripts, with tool names no other capture uses (the third hold-out set of
`HOLDOUT.md`): what each tool answers and how the ground truth records it.

The tools: trace_shipment(tracking_no), reroute_shipment(tracking_no, depot), refund_postage(tracking_no)
(fails: "postage ledger frozen"), delete_account(user_id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import Scenario
from hotel import call_recorded


def trace_shipment(tracking_no: str) -> str:
    """Where a shipment is now."""
    return f"{tracking_no}: sorted at the Lyon hub, out for delivery tomorrow"


def reroute_shipment(tracking_no: str, depot: str) -> str:
    """Send a shipment to another depot."""
    return f"{tracking_no} rerouted to the {depot} depot, ticket RR-5520"


def refund_postage(tracking_no: str) -> str:
    """Refund the postage paid for a shipment."""
    raise RuntimeError("postage ledger frozen")


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (trace_shipment, reroute_shipment, refund_postage, delete_account)
}


def shipping_tools(current: Callable[[], Scenario]) -> dict[str, Callable[..., str]]:
    """The shipping tools as typed, documented functions (what frameworks build tool schemas from), each recording
    what it received and returned, or that it failed, into the scenario `current()` gives."""

    def run(name: str, arguments: dict[str, Any]) -> str:
        return call_recorded(FUNCTIONS, current(), name, arguments)

    def trace_shipment(tracking_no: str) -> str:
        """Where a shipment is now."""
        return run("trace_shipment", {"tracking_no": tracking_no})

    def reroute_shipment(tracking_no: str, depot: str) -> str:
        """Send a shipment to another depot."""
        return run("reroute_shipment", {"tracking_no": tracking_no, "depot": depot})

    def refund_postage(tracking_no: str) -> str:
        """Refund the postage paid for a shipment."""
        return run("refund_postage", {"tracking_no": tracking_no})

    def delete_account(user_id: str) -> str:
        """Delete a customer's account."""
        return run("delete_account", {"user_id": user_id})

    return {f.__name__: f for f in (trace_shipment, reroute_shipment, refund_postage, delete_account)}
