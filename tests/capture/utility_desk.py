"""Energy-utility desk tools for capture scripts, with tool and agent names no other capture uses (the fourth
hold-out set of `HOLDOUT.md`): what each tool answers and how the ground truth records it.

The tools: read_meter(meter_id), book_technician(meter_id, day), waive_late_fee(invoice_id) (fails: "fee ledger
closed for month-end"), tariff_quote(kwh), delete_account(user_id). The metering desk reads meters and books
visits; the accounts desk handles fees, tariffs and account closures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import Scenario
from hotel import call_recorded


def read_meter(meter_id: str) -> str:
    """The latest reading of an electricity meter."""
    return f"meter {meter_id}: 4120 kWh, last read 2 days ago, no fault"


def book_technician(meter_id: str, day: str) -> str:
    """Book a technician's visit to a meter."""
    return f"technician booked for {meter_id} on {day}, job JT-301"


def waive_late_fee(invoice_id: str) -> str:
    """Waive the late-payment fee of an invoice."""
    raise RuntimeError("fee ledger closed for month-end")


def tariff_quote(kwh: int) -> str:
    """The monthly price of a consumption on the green tariff."""
    return f"{kwh} kWh a month: {round(kwh * 0.21)} EUR on the green tariff"


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (read_meter, book_technician, waive_late_fee, tariff_quote, delete_account)
}
METERING = ("read_meter", "book_technician")
ACCOUNTS = ("waive_late_fee", "tariff_quote", "delete_account")


def desk_tools(current: Callable[[], Scenario]) -> dict[str, Callable[..., str]]:
    """The desk tools as typed, documented functions (what frameworks build tool schemas from), each recording
    what it received and returned, or that it failed, into the scenario `current()` gives."""

    def run(name: str, arguments: dict[str, Any]) -> str:
        return call_recorded(FUNCTIONS, current(), name, arguments)

    def read_meter(meter_id: str) -> str:
        """The latest reading of an electricity meter."""
        return run("read_meter", {"meter_id": meter_id})

    def book_technician(meter_id: str, day: str) -> str:
        """Book a technician's visit to a meter."""
        return run("book_technician", {"meter_id": meter_id, "day": day})

    def waive_late_fee(invoice_id: str) -> str:
        """Waive the late-payment fee of an invoice."""
        return run("waive_late_fee", {"invoice_id": invoice_id})

    def tariff_quote(kwh: int) -> str:
        """The monthly price of a consumption on the green tariff."""
        return run("tariff_quote", {"kwh": kwh})

    def delete_account(user_id: str) -> str:
        """Delete a customer's account."""
        return run("delete_account", {"user_id": user_id})

    return {f.__name__: f for f in (read_meter, book_technician, waive_late_fee, tariff_quote, delete_account)}
