"""Which suites a run belongs to: a suite's `match` block read as a user writes it."""

from __future__ import annotations

from otelgrade.grade.route import match_filter
from tests.trajectories import run


def test_every_key_must_match() -> None:
    matches = match_filter({"service.name": "booking", "deployment.tier": "gold"})
    assert matches(run(service_name="booking", attributes={"deployment.tier": "gold"}))
    assert not matches(run(service_name="booking", attributes={"deployment.tier": "free"}))
    assert not matches(run(service_name="search", attributes={"deployment.tier": "gold"}))


def test_a_caret_value_is_a_regex_and_a_list_any_of_its_values() -> None:
    assert match_filter({"agent_name": "^book"})(run(agent_name="booking_agent"))
    assert not match_filter({"agent_name": "^book"})(run(agent_name="rebooker"))
    assert match_filter({"status": ["ok", "error"]})(run(status="error"))


def test_an_empty_match_grades_the_requests_not_the_nested_runs() -> None:
    matches = match_filter({})
    assert matches(run())
    assert not matches(run(parent_span_id="c" * 16))


def test_an_agent_suite_grades_that_agents_own_runs_wherever_they_are() -> None:
    matches = match_filter({"agent_name": "billing"})
    assert matches(run(agent_name="billing", parent_span_id="c" * 16))
    assert not matches(run(agent_name="billing", own_run=False))


def test_a_missing_attribute_never_equals_a_string() -> None:
    assert not match_filter({"team": "None"})(run())
