"""MLflow Tracing's default span schema rebuilt from a real capture (`tests/capture/mlflow-openai`), as its ground
truth says, and the older conversation attribute on a span made by hand."""

from __future__ import annotations

import json

import pytest

from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import LLMFacts, RunFacts
from tests.captures import load_folder
from tests.rebuild.dialects.test_logfire import (
    AGENTS_SINGLE,
    FRAMEWORKS,
    assert_as_ground_truth,
    expected,
    request_runs,
)
from tests.rebuild.test_rebuild import span

SOURCE = "mlflow-openai"
LANGGRAPH = "mlflow-langgraph"


def assert_rebuilt_as_ground_truth(source: str, scenario: str, dialect: str) -> None:
    truth = expected(source, scenario)["runs"]
    runs = request_runs(source, scenario)
    assert len(runs) == len(truth)
    for run, run_truth in zip(runs, truth, strict=True):
        assert run.source == dialect
        assert run.lacks == []
        assert_as_ground_truth(run, run_truth)


def assert_a_failed_model_call_fails_the_run_and_a_failed_tool_does_not(source: str) -> None:
    (failed,) = request_runs(source, "agent_error")
    assert failed.status == "error"
    assert "model backend unavailable" in (failed.error or "")
    (declined,) = request_runs(source, "tool_error")
    assert declined.status == "ok"
    assert [(c.name, c.error, c.result) for c in declined.tool_calls] == [("charge_card", True, None)]


@pytest.mark.parametrize("source", [SOURCE, LANGGRAPH])
@pytest.mark.parametrize("scenario", AGENTS_SINGLE)
def test_runs_are_the_ground_truth(source: str, scenario: str) -> None:
    assert_rebuilt_as_ground_truth(source, scenario, "mlflow")


def test_model_calls_carry_the_conversation_usage_and_finish_reason() -> None:
    (run,) = request_runs(SOURCE, "happy")
    first, last = run.llm_calls[0], run.llm_calls[-1]
    assert (first.model, first.input_tokens, first.output_tokens, first.finish_reason) == (
        "gpt-4o-mini",
        60,
        12,
        "tool_calls",
    )
    assert [m["role"] for m in first.input_messages] == ["system", "user"]
    assert first.output_messages[0]["tool_calls"][0]["function"]["name"] == "search_flights"
    assert [m["role"] for m in last.input_messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert last.output_messages == [
        {"role": "assistant", "content": "Your flight UA123 is booked. Confirmation: ABC123456"}
    ]
    assert last.finish_reason == "stop"
    # the model's call ids reach the tool executions, which record none of their own
    assert [c.call_id for c in run.tool_calls] == [
        first.output_messages[0]["tool_calls"][0]["id"],
        run.llm_calls[1].output_messages[0]["tool_calls"][0]["id"],
    ]


@pytest.mark.parametrize("source", [SOURCE, LANGGRAPH])
def test_a_failed_model_call_fails_the_run_and_a_failed_tool_does_not(source: str) -> None:
    assert_a_failed_model_call_fails_the_run_and_a_failed_tool_does_not(source)


def test_langchain_tools_give_their_tool_messages_content_and_call_id() -> None:
    """LangChain's autolog: a tool span's output is its ToolMessage, the call id is on the span too."""
    (run,) = request_runs(LANGGRAPH, "parallel")
    asked = [c["id"] for c in run.llm_calls[0].output_messages[0]["tool_calls"]]
    assert [(c.name, c.call_id, c.result) for c in run.tool_calls] == [
        ("get_weather", asked[0], "12C rain"),
        ("get_weather", asked[1], "18C sun"),
    ]


def test_an_agent_returning_a_langgraph_state_answers_its_last_ai_message() -> None:
    state = {
        "messages": [
            {"type": "human", "content": "Weather in Paris?"},
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}],
            },
            {"type": "tool", "content": "12C rain", "tool_call_id": "c1"},
            {"type": "ai", "content": "12C and rain."},
        ]
    }
    agent = span(
        "1",
        None,
        "weather_agent",
        {"mlflow.spanType": '"AGENT"', "mlflow.spanInputs": json.dumps(state), "mlflow.spanOutputs": json.dumps(state)},
    )
    classified = classify(agent)
    assert classified is not None and isinstance(classified.facts, RunFacts)
    assert (classified.facts.input, classified.facts.output) == ("Weather in Paris?", "12C and rain.")


def test_the_services_own_span_is_not_read_as_mlflows() -> None:
    """MLflow's processor tags every span it exports, the service's `handle_request` too, with a `null` type."""
    spans, _ = load_folder(FRAMEWORKS / SOURCE / "happy")
    (root,) = [s for s in spans if s.name == "handle_request"]
    assert json.loads(root.attributes["mlflow.spanType"]) is None
    assert classify(root) is None


def test_the_conversation_attribute_of_older_releases_gives_the_messages() -> None:
    """Before 3.0 a chat span held its whole exchange in `mlflow.chat.messages`, the answer last."""
    exchange = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "12C and rain."},
    ]
    chat = span(
        "2",
        "1",
        "ChatOpenAI",
        {"mlflow.spanType": '"CHAT_MODEL"', "mlflow.chat.messages": json.dumps(exchange)},
        start=1,
        end=2,
    )
    classified = classify(chat)
    assert classified is not None and classified.dialect == "mlflow"
    assert isinstance(classified.facts, LLMFacts)
    assert classified.facts.input_messages == exchange[:1]
    assert classified.facts.output_messages == exchange[1:]
    agent = span(
        "1",
        None,
        "weather_agent",
        {"mlflow.spanType": '"AGENT"', "mlflow.spanInputs": '{"question": "Weather in Paris?"}'},
        end=3,
    )
    (run,) = rebuild([agent, chat])
    assert (run.agent_name, run.input, run.output) == ("weather_agent", "Weather in Paris?", "12C and rain.")
