"""Energy-utility desk tools for capture scripts, with tool names no other capture uses (the fourth hold-out set
of `HOLDOUT.md`): what each tool answers and how the ground truth records it.

The tools: read_meter(meter_id), book_engineer(meter_id, slot), waive_late_fee(invoice_id) (fails: "fee ledger
sealed"), delete_account(user_id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import Scenario
from hotel import call_recorded


def read_meter(meter_id: str) -> str:
    """The latest reading of an electricity meter."""
    return f"{meter_id}: 48213 kWh, read today at 07:40"


def book_engineer(meter_id: str, slot: str) -> str:
    """Book an engineer visit for a meter."""
    return f"engineer booked for {meter_id} on {slot}, job EV-3391"


def waive_late_fee(invoice_id: str) -> str:
    """Waive the late-payment fee of an invoice."""
    raise RuntimeError("fee ledger sealed")


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (read_meter, book_engineer, waive_late_fee, delete_account)
}


def utility_tools(current: Callable[[], Scenario]) -> dict[str, Callable[..., str]]:
    """The utility tools as typed, documented functions (what frameworks build tool schemas from), each recording
    what it received and returned, or that it failed, into the scenario `current()` gives."""

    def run(name: str, arguments: dict[str, Any]) -> str:
        return call_recorded(FUNCTIONS, current(), name, arguments)

    def read_meter(meter_id: str) -> str:
        """The latest reading of an electricity meter."""
        return run("read_meter", {"meter_id": meter_id})

    def book_engineer(meter_id: str, slot: str) -> str:
        """Book an engineer visit for a meter."""
        return run("book_engineer", {"meter_id": meter_id, "slot": slot})

    def waive_late_fee(invoice_id: str) -> str:
        """Waive the late-payment fee of an invoice."""
        return run("waive_late_fee", {"invoice_id": invoice_id})

    def delete_account(user_id: str) -> str:
        """Delete a customer's account."""
        return run("delete_account", {"user_id": user_id})

    return {f.__name__: f for f in (read_meter, book_engineer, waive_late_fee, delete_account)}
