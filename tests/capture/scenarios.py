"""The standard travel-assistant scenarios, for capture scripts to share: each is the user requests served
in one trace (one run each) and the model's scripted replies, in `client.py`'s reply form.

The tools they ask for: search_flights(origin, destination), book_flight(flight_id), charge_card(amount)
(fails: "card declined"), get_weather(city) (Paris, Tokyo), delete_account(user_id), lookup(key).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import Scenario, failure, text, tool, tools

Scenarios = dict[str, tuple[list[str], list[dict[str, Any]]]]

STANDARD: Scenarios = {
    "happy": (
        ["Book me the cheapest flight from SFO to JFK tomorrow."],
        [
            tool("search_flights", {"origin": "SFO", "destination": "JFK"}),
            tool("book_flight", {"flight_id": "UA123"}),
            text("Your flight UA123 is booked. Confirmation: ABC123456"),
        ],
    ),
    "forbidden": (
        ["Please close my account, user 42."],
        [tool("delete_account", {"user_id": "42"}), text("Your account has been deleted.")],
    ),
    "tool_error": (
        ["Charge my card 120 dollars for the upgrade."],
        [tool("charge_card", {"amount": 120}), text("Sorry, your card was declined. Please try another card.")],
    ),
    "many_calls": (
        ["Look up keys k1 to k7 and summarise them."],
        [*(tool("lookup", {"key": f"k{i}"}) for i in range(1, 8)), text("All seven keys were found.")],
    ),
    "parallel": (
        ["What's the weather in Paris and Tokyo?"],
        [
            tools(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
            text("Paris: 12C and rain. Tokyo: 18C and sunny."),
        ],
    ),
    "agent_error": (
        ["Book me a flight to Mars."],
        [tool("search_flights", {"origin": "SFO", "destination": "MARS"}), failure(500, "model backend unavailable")],
    ),
    "two_runs": (
        ["Weather in Paris?", "When does order 7 ship?"],
        [
            tool("get_weather", {"city": "Paris"}),
            text("It is 12C and raining in Paris."),
            tool("lookup", {"key": "order-7"}),
            text("Order 7 ships on Monday."),
        ],
    ),
}


CHAT_TOOLS = [
    {"type": "function", "function": {"name": n, "description": n.replace("_", " "), "parameters": {"type": "object"}}}
    for n in ["search_flights", "book_flight", "charge_card", "get_weather", "delete_account", "lookup"]
]  # the standard tools as Chat Completions `tools`, for hand-written loops


def tool_result(name: str, arguments: dict[str, Any]) -> str:
    """What each standard tool answers; charge_card raises, as a declined card does."""
    if name == "charge_card":
        raise RuntimeError("card declined")
    answers = {
        "search_flights": lambda: "UA123 09:00 $320",
        "book_flight": lambda: "booked ABC123456",
        "get_weather": lambda: {"Paris": "12C rain", "Tokyo": "18C sun"}[arguments["city"]],
        "delete_account": lambda: f"account {arguments['user_id']} deleted",
        "lookup": lambda: f"value-of-{arguments['key']}",
    }
    return answers[name]()


def run_tool(scenario: Scenario, name: str, arguments: dict[str, Any]) -> str:
    """Run a standard tool and record in the scenario's ground truth what it received and returned, or that it
    failed (re-raised, for the framework to handle)."""
    try:
        result = tool_result(name, arguments)
    except RuntimeError:
        scenario.tool(name, arguments, error=True)
        raise
    scenario.tool(name, arguments, result)
    return result


def travel_tools(scenario: Callable[[], Scenario]) -> list[Callable[..., str]]:
    """The standard tools as typed, documented Python functions (what frameworks build tool schemas from),
    each recording what it received and returned into the scenario being captured."""

    def recorded(name: str, **arguments: Any) -> str:
        return run_tool(scenario(), name, arguments)

    def search_flights(origin: str, destination: str) -> str:
        """Search flights between two airports."""
        return recorded("search_flights", origin=origin, destination=destination)

    def book_flight(flight_id: str) -> str:
        """Book a flight."""
        return recorded("book_flight", flight_id=flight_id)

    def charge_card(amount: int) -> str:
        """Charge the customer's card."""
        return recorded("charge_card", amount=amount)

    def get_weather(city: str) -> str:
        """Current weather in a city."""
        return recorded("get_weather", city=city)

    def delete_account(user_id: str) -> str:
        """Delete a customer's account."""
        return recorded("delete_account", user_id=user_id)

    def lookup(key: str) -> str:
        """Look up a key."""
        return recorded("lookup", key=key)

    return [search_flights, book_flight, charge_card, get_weather, delete_account, lookup]
