"""Energy-utility tariff and billing scenarios for capture scripts (the fourth hold-out set; `utility.py` holds
another desk of the trade), with tool names no older capture uses: each is the user requests served in one trace
and the model's scripted replies, in `client.py`'s reply form.

The tools: read_meter(meter_id) (M-7, M-9), switch_tariff(meter_id, plan), credit_overcharge(amount) (fails:
"credit window has closed"), outage_status(postcode) (1010, 8020), delete_account(user_id), estimate_bill(kwh).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import failure, text, tool, tools
from hotel import chat_schemas, messages_tools


def read_meter(meter_id: str) -> str:
    """The latest reading of an electricity meter."""
    return {"M-7": "4312 kWh on 1 November", "M-9": "881 kWh on 30 October"}[meter_id]


def switch_tariff(meter_id: str, plan: str) -> str:
    """Move a meter to another tariff plan."""
    return f"{meter_id} moves to {plan} on the 1st of next month"


def credit_overcharge(amount: int) -> str:
    """Credit an overcharged amount back to the customer's account."""
    raise RuntimeError("credit window has closed")


def outage_status(postcode: str) -> str:
    """Known power outages in a postcode."""
    return {"1010": "no outage", "8020": "outage since 06:40, fix expected 13:00"}[postcode]


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return f"account {user_id} deleted"


def estimate_bill(kwh: int) -> str:
    """The monthly bill for a consumption in kWh."""
    return f"{round(kwh * 0.31)} EUR a month"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (read_meter, switch_tariff, credit_overcharge, outage_status, delete_account, estimate_bill)
}
SCHEMAS = chat_schemas(FUNCTIONS)  # the tools as Chat Completions `tools`, for hand-written loops
MESSAGES_TOOLS = messages_tools(SCHEMAS)  # the same as Anthropic Messages API `tools`

Scenarios = dict[str, tuple[list[str], list[dict[str, Any]]]]
REQUESTS: Scenarios = {
    "happy": (
        ["Read meter M-7 and put it on the green night plan."],
        [
            tool("read_meter", {"meter_id": "M-7"}),
            tool("switch_tariff", {"meter_id": "M-7", "plan": "green-night"}),
            text("M-7 reads 4312 kWh; it moves to green-night on the 1st of next month."),
        ],
    ),
    "forbidden": (
        ["I am moving abroad; wipe my customer account e-512."],
        [tool("delete_account", {"user_id": "e-512"}), text("Customer account e-512 has been wiped.")],
    ),
    "tool_error": (
        ["You overcharged me 64 euros in October, credit it back."],
        [tool("credit_overcharge", {"amount": 64}), text("I could not credit it: the credit window has closed.")],
    ),
    "parallel": (
        ["Is there a power cut in 1010 or in 8020?"],
        [
            tools(("outage_status", {"postcode": "1010"}), ("outage_status", {"postcode": "8020"})),
            text("1010 has no outage; 8020 is out since 06:40, fix expected at 13:00."),
        ],
    ),
    "agent_error": (
        ["What does meter M-9 read?"],
        [tool("read_meter", {"meter_id": "M-9"}), failure(503, "model backend overloaded")],
    ),
    "two_requests": (
        ["What would 300 kWh a month cost me?", "And what does meter M-9 say?"],
        [
            tool("estimate_bill", {"kwh": 300}),
            text("300 kWh comes to about 93 EUR a month."),
            tool("read_meter", {"meter_id": "M-9"}),
            text("M-9 read 881 kWh on 30 October."),
        ],
    ),
}
