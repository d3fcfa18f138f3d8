"""Langfuse SDK observations rebuilt from real captures (`tests/capture/langfuse-openai*`), as their ground truth
says: with content, and with a `mask=` function that hides it behind a placeholder."""

from __future__ import annotations

import pytest

from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import ToolFacts
from tests.captures import load_folder
from tests.rebuild.dialects.test_logfire import AGENTS_SINGLE, FRAMEWORKS, expected, request_runs
from tests.rebuild.dialects.test_mlflow import (
    assert_a_failed_model_call_fails_the_run_and_a_failed_tool_does_not,
    assert_rebuilt_as_ground_truth,
)
from tests.rebuild.test_rebuild import span

SOURCE = "langfuse-openai"
MASKED = "langfuse-openai-masked"
HIDDEN = ["input", "output", "messages", "tool_arguments", "tool_results"]


@pytest.mark.parametrize("scenario", AGENTS_SINGLE)
def test_runs_are_the_ground_truth(scenario: str) -> None:
    assert_rebuilt_as_ground_truth(SOURCE, scenario, "langfuse")


def test_the_agent_is_a_run_though_the_services_span_above_it_was_never_exported() -> None:
    """Langfuse's span filter drops the service's `handle_request`: the agent observation's parent is missing."""
    spans, _ = load_folder(FRAMEWORKS / SOURCE / "happy")
    ids = {s.span_id for s in spans}
    (agent,) = [s for s in spans if s.name == "travel_agent"]
    assert "handle_request" not in {s.name for s in spans}
    assert agent.parent_id is not None and agent.parent_id not in ids
    (run,) = request_runs(SOURCE, "happy")
    assert run.span_id == agent.span_id


def test_generations_carry_the_conversation_and_usage() -> None:
    (run,) = request_runs(SOURCE, "happy")
    first, last = run.llm_calls[0], run.llm_calls[-1]
    assert (first.model, first.input_tokens, first.output_tokens) == ("gpt-4o-mini", 60, 12)
    assert [m["role"] for m in first.input_messages] == ["system", "user"]
    assert first.output_messages[0]["tool_calls"][0]["function"]["name"] == "search_flights"
    assert last.output_messages == [
        {"role": "assistant", "content": "Your flight UA123 is booked. Confirmation: ABC123456"}
    ]
    # the model's call ids reach the tool observations, which record none of their own
    assert [c.call_id for c in run.tool_calls] == [
        call.output_messages[0]["tool_calls"][0]["id"] for call in run.llm_calls[:2]
    ]


def test_a_failed_model_call_fails_the_run_and_a_failed_tool_does_not() -> None:
    assert_a_failed_model_call_fails_the_run_and_a_failed_tool_does_not(SOURCE)


def test_a_tool_marked_error_only_by_its_level_failed() -> None:
    observation = span(
        "2",
        "1",
        "charge_card",
        {
            "langfuse.observation.type": "tool",
            "langfuse.observation.input": '{"args": [], "kwargs": {"amount": 120}}',
            "langfuse.observation.level": "ERROR",
            "langfuse.observation.status_message": "card declined",
        },
    )
    classified = classify(observation)
    assert classified is not None and isinstance(classified.facts, ToolFacts)
    assert (classified.facts.arguments, classified.facts.error) == ({"amount": 120}, True)


@pytest.mark.parametrize("scenario", ["happy", "tool_error", "agent_error"])
def test_masked_runs_lack_the_content_and_keep_the_rest(scenario: str) -> None:
    (truth,) = expected(MASKED, scenario)["runs"]
    (run,) = request_runs(MASKED, scenario)
    assert sorted(run.lacks) == sorted(HIDDEN) == sorted(truth["lacks"])
    assert (run.agent_name, run.status, len(run.llm_calls)) == (
        truth["agent_name"],
        truth["status"],
        truth["llm_calls"],
    )
    assert [(c.name, c.error) for c in run.tool_calls] == [(c["name"], c["error"]) for c in truth["tool_calls"]]
    assert (run.input, run.output, run.messages) == (None, None, [])
    assert all(c.arguments is None and c.result is None for c in run.tool_calls)
    assert all(not call.input_messages and not call.output_messages for call in run.llm_calls)
    assert "[REDACTED]" not in run.model_dump_json()


@pytest.mark.parametrize("placeholder", ["[REDACTED]", "<fully masked due to failed mask function>", "***"])
def test_a_mask_placeholder_is_no_content(placeholder: str) -> None:
    observation = span(
        "1",
        None,
        "lookup",
        {
            "langfuse.observation.type": "tool",
            "langfuse.observation.input": placeholder,
            "langfuse.observation.output": placeholder,
        },
    )
    classified = classify(observation)
    assert classified is not None and isinstance(classified.facts, ToolFacts)
    assert (classified.facts.arguments, classified.facts.result) == (None, None)


def test_a_partly_masked_value_is_content() -> None:
    observation = span(
        "1",
        None,
        "lookup",
        {"langfuse.observation.type": "tool", "langfuse.observation.output": "card [REDACTED] was charged"},
    )
    classified = classify(observation)
    assert classified is not None and isinstance(classified.facts, ToolFacts)
    assert classified.facts.result == "card [REDACTED] was charged"
