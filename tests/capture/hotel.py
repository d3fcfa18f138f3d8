"""Hotel-desk scenarios for capture scripts, with tool and agent names the older captures never used (the
hold-out captures of `HOLDOUT.md`): each is the user requests served in one trace and the model's scripted
replies, in `client.py`'s reply form.

The tools: find_rooms(city), reserve_room(room_id), refund_deposit(amount) (fails: "refund window closed"),
track_parcel(parcel_id) (P1, P2), delete_account(user_id), quote_rate(city).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from client import Scenario, failure, text, tool, tools


def find_rooms(city: str) -> str:
    """Free hotel rooms in a city."""
    return f"{city[:3].upper()}-204 sea view 140 EUR; {city[:3].upper()}-310 courtyard 95 EUR"


def reserve_room(room_id: str) -> str:
    """Reserve a hotel room by id."""
    return f"reserved {room_id}, reference R-88123"


def refund_deposit(amount: int) -> str:
    """Refund the guest's deposit."""
    raise RuntimeError("refund window closed")


def track_parcel(parcel_id: str) -> str:
    """Where a parcel is."""
    return {"P1": "in transit at Lyon", "P2": "delivered to reception"}[parcel_id]


def delete_account(user_id: str) -> str:
    """Delete a guest's account."""
    return f"account {user_id} deleted"


def quote_rate(city: str) -> str:
    """The nightly rate of the hotel in a city."""
    return f"{city}: 140 EUR a night"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (find_rooms, reserve_room, refund_deposit, track_parcel, delete_account, quote_rate)
}


def chat_schemas(functions: dict[str, Callable[..., str]]) -> list[dict[str, Any]]:
    """Tool functions as Chat Completions `tools`, for hand-written loops: each parameter a string, or an integer
    where annotated `int`."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": function.__doc__,
                "parameters": {
                    "type": "object",
                    "properties": {
                        p: {"type": "integer" if t in (int, "int") else "string"}
                        for p, t in function.__annotations__.items()
                        if p != "return"
                    },
                },
            },
        }
        for name, function in functions.items()
    ]


SCHEMAS = chat_schemas(FUNCTIONS)


def messages_tools(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions `tools` as Anthropic Messages API `tools`."""
    return [
        {
            "name": s["function"]["name"],
            "description": s["function"]["description"],
            "input_schema": s["function"]["parameters"],
        }
        for s in schemas
    ]


MESSAGES_TOOLS = messages_tools(SCHEMAS)

Scenarios = dict[str, tuple[list[str], list[dict[str, Any]]]]
REQUESTS: Scenarios = {
    "happy": (
        ["Find me a room in Lisbon for Friday and reserve the best one."],
        [
            tool("find_rooms", {"city": "Lisbon"}),
            tool("reserve_room", {"room_id": "LIS-204"}),
            text("Room LIS-204 is reserved for Friday; your reference is R-88123."),
        ],
    ),
    "forbidden": (
        ["Remove my profile please, customer c-77."],
        [tool("delete_account", {"user_id": "c-77"}), text("Your profile c-77 has been removed.")],
    ),
    "tool_error": (
        ["Refund my 80 euro deposit."],
        [tool("refund_deposit", {"amount": 80}), text("I could not refund it: the refund window is closed.")],
    ),
    "parallel": (
        ["Where are my parcels P1 and P2?"],
        [
            tools(("track_parcel", {"parcel_id": "P1"}), ("track_parcel", {"parcel_id": "P2"})),
            text("P1 is in transit at Lyon; P2 was delivered to reception."),
        ],
    ),
    "agent_error": (
        ["Find me a room in Atlantis."],
        [tool("find_rooms", {"city": "Atlantis"}), failure(500, "model backend unavailable")],
    ),
    "two_requests": (
        ["Any rooms in Porto?", "Where is parcel P1?"],
        [
            tool("find_rooms", {"city": "Porto"}),
            text("Porto has POR-204 (140 EUR) and POR-310 (95 EUR)."),
            tool("track_parcel", {"parcel_id": "P1"}),
            text("Parcel P1 is in transit at Lyon."),
        ],
    ),
}


def run_recorded(scenario: Scenario, name: str, arguments: dict[str, Any]) -> str:
    """Run a hotel tool and record in the scenario's ground truth what it received and returned, or that it
    failed (re-raised, for the framework to handle)."""
    return call_recorded(FUNCTIONS, scenario, name, arguments)


def call_recorded(
    functions: dict[str, Callable[..., str]], scenario: Scenario, name: str, arguments: dict[str, Any]
) -> str:
    """Run one of `functions` and record the call in the scenario's ground truth (a RuntimeError as a failed
    call, re-raised)."""
    try:
        result = functions[name](**arguments)
    except RuntimeError:
        scenario.tool(name, arguments, error=True)
        raise
    scenario.tool(name, arguments, result)
    return result


def recorded_tools(
    functions: dict[str, Callable[..., str]], current: Callable[[], Scenario]
) -> dict[str, Callable[..., str]]:
    """`functions` as tools with their own names, signatures and docstrings (what frameworks build tool schemas
    from), each call recorded into the scenario `current()` gives, as `call_recorded` does."""

    def recording(name: str, function: Callable[..., str]) -> Callable[..., str]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def run(*args: object, **kwargs: object) -> str:
            return call_recorded(functions, current(), name, dict(signature.bind(*args, **kwargs).arguments))

        return run

    return {name: recording(name, function) for name, function in functions.items()}
