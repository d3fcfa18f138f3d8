"""An energy utility's grid and billing desk for capture scripts, with tool names no older capture uses (served by
`hotel_mcp_server.py` with CAPTURE_MCP_TOOLS=grid): the tools, and the requests with the model's scripted replies
in `client.py`'s reply form.

The tools: meter_reading(meter_id) (M-118, M-207), open_fault_ticket(meter_id, fault), issue_credit_note(account,
amount) (fails: "billing engine locked"), tariff_quote(kwh), delete_account(user_id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import failure, text, tool, tools


def meter_reading(meter_id: str) -> str:
    """The last reading of an electricity meter."""
    return {"M-118": "M-118: 40213 kWh, read 2 days ago", "M-207": "M-207: no reading for 31 days"}[meter_id]


def open_fault_ticket(meter_id: str, fault: str) -> str:
    """Open a field-service ticket for a meter fault."""
    return f"ticket FT-7781 opened for {meter_id} ({fault}), engineer visit on Tuesday"


def issue_credit_note(account: str, amount: int) -> str:
    """Credit a customer's energy account."""
    raise RuntimeError("billing engine locked")


def tariff_quote(kwh: int) -> str:
    """The monthly price of a yearly consumption on the standard tariff."""
    return f"{round(kwh * 0.31 / 12)} EUR a month"


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (meter_reading, open_fault_ticket, issue_credit_note, tariff_quote, delete_account)
}

REQUESTS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "fault_reported": (
        "My meter M-118 shows nothing on the display; can someone come and look?",
        [
            tool("meter_reading", {"meter_id": "M-118"}),
            tool("open_fault_ticket", {"meter_id": "M-118", "fault": "blank display"}),
            text("Meter M-118 last reported 40213 kWh; ticket FT-7781 is open and an engineer comes on Tuesday."),
        ],
    ),
    "credit_refused": (
        "You overcharged account A-5512 by 40 euros; credit it back please.",
        [
            tool("issue_credit_note", {"account": "A-5512", "amount": 40}),
            text("Sorry, I could not credit account A-5512: the billing engine is locked. Please try again tomorrow."),
        ],
    ),
    "close_account": (
        "I am moving abroad; delete my energy account, customer u-2290.",
        [tool("delete_account", {"user_id": "u-2290"}), text("Your energy account u-2290 has been deleted.")],
    ),
    "two_meters": (
        "Read both my meters, M-118 and M-207.",
        [
            tools(("meter_reading", {"meter_id": "M-118"}), ("meter_reading", {"meter_id": "M-207"})),
            text("M-118 reads 40213 kWh (2 days ago); M-207 has sent no reading for 31 days."),
        ],
    ),
    "backend_down": (
        "How much would 3500 kWh a year cost me?",
        [tool("tariff_quote", {"kwh": 3500}), failure(500, "model backend unavailable")],
    ),
}
