"""The role a framework's prompt gives an agent's model, read only from the prompt's fixed shape."""

from __future__ import annotations

from otelgrade.rebuild.roles import declared_role


def test_crewais_role_playing_prompt_names_the_role() -> None:
    prompt = "You are Crew Manager. You are a seasoned manager.\nYour personal goal is: Manage the team."
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": "Close u-1."}]
    assert declared_role(messages) == "Crew Manager"


def test_instructions_of_another_shape_name_no_role() -> None:
    """A plain persona sentence is no role: without the prompt's goal line, nothing says it is a name."""
    assert declared_role([{"role": "system", "content": "You are an energy utility's billing desk."}]) is None
    assert declared_role([{"role": "user", "content": "You are X. Do it.\nYour personal goal is: Y"}]) is None
