"""What a tool call says of the agent it hands to: an argument, its result, or the end of its name."""

from __future__ import annotations

from otelgrade.rebuild.transfers import names, target_argument, told


def test_an_argument_says_whom_a_call_hands_to() -> None:
    assert target_argument({"coworker": "Researcher", "task": "find rates"}) == "Researcher"
    assert target_argument({"city": "Paris"}) is None


def test_a_call_names_an_agent_by_argument_or_by_its_name_ending() -> None:
    assert names("route_to_bookings", {}, "bookings")
    assert names("handoff", {"to_agent": "billing"}, "billing")
    assert not names("get_weather", {"city": "Paris"}, "billing")


def test_a_result_names_the_agent_as_a_word_of_its_own() -> None:
    assert told("Successfully transferred to billing", "billing")
    assert not told("billing_desk is closed", "billing")


def test_a_call_names_an_agent_in_a_list_argument() -> None:
    assert names("delegate_task", {"task": "File it.", "targetAgents": ["desk", "closer"]}, "desk")
    assert not names("delegate_task", {"targetAgents": ["closer"]}, "desk")
