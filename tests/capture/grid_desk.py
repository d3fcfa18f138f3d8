"""Power-grid service desk tools for capture scripts, with tool names no other capture uses (the fourth hold-out
set of `HOLDOUT.md`): what each tool answers and how the ground truth records it.

The tools: read_meter(meter_id), check_outage(postcode), open_repair(meter_id, fault), waive_late_fee(invoice_id)
(fails: "billing ledger sealed"), delete_account(user_id).
"""

from __future__ import annotations

from collections.abc import Callable

from client import Scenario


def grid_tools(current: Callable[[], Scenario]) -> dict[str, Callable[..., str]]:
    """The desk's tools as typed, documented functions (what frameworks build tool schemas from), each recording
    what it received and returned, or that it failed (raised as RuntimeError), into the scenario `current()`
    gives."""

    def read_meter(meter_id: str) -> str:
        """The latest reading of an electricity meter."""
        return current().ran("read_meter", {"meter_id": meter_id}, f"meter {meter_id}: 4312 kWh, read 2 days ago")

    def check_outage(postcode: str) -> str:
        """Whether the grid around a postcode has an outage."""
        return current().ran("check_outage", {"postcode": postcode}, f"{postcode}: no outage, last cut 3 weeks ago")

    def open_repair(meter_id: str, fault: str) -> str:
        """Open a repair job for a faulty meter."""
        arguments = {"meter_id": meter_id, "fault": fault}
        return current().ran("open_repair", arguments, f"repair job RJ-5081 opened for {meter_id}")

    def waive_late_fee(invoice_id: str) -> str:
        """Waive the late-payment fee of an invoice."""
        return current().ran("waive_late_fee", {"invoice_id": invoice_id}, error="billing ledger sealed")

    def delete_account(user_id: str) -> str:
        """Delete a customer's account."""
        return current().ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")

    return {f.__name__: f for f in (read_meter, check_outage, open_repair, waive_late_fee, delete_account)}
