"""Potato's reference trajectories: tool calls read from each shape it accepts, compared as it compares them."""

from __future__ import annotations

from otelgrade.grade.graders.potato_reference import Call, args_match, coerce_args, greedy_matches, reference_calls


def test_calls_are_read_from_openai_style_messages() -> None:
    reference = [
        {"role": "assistant", "tool_calls": [{"function": {"name": "search", "arguments": '{"q": "paris"}'}}]},
        {"role": "tool", "content": "3 results"},
    ]
    assert [(c.name, c.args) for c in reference_calls(reference)] == [("search", {"q": "paris"})]


def test_arguments_as_json_text_read_as_a_dict() -> None:
    assert coerce_args('{"city": "Paris"}') == {"city": "Paris"}
    assert coerce_args(None) == {}


def test_subset_and_superset_compare_flat_with_python_equality() -> None:
    assert args_match("subset", {"a": 1}, {"a": 1.0, "b": 2})
    assert not args_match("subset", {"a": 1, "c": 3}, {"a": 1})
    assert args_match("superset", {"a": True, "b": 2}, {"a": 1})


def test_each_wanted_call_takes_the_first_unused_match() -> None:
    pool = [Call("search", {}), Call("search", {})]
    wanted = [Call("search", {}), Call("search", {}), Call("search", {})]
    assert greedy_matches(wanted, pool, lambda p, w: p.name == w.name) == 2
