"""MLflow Tracing's default span schema rebuilt from a real capture (`tests/capture/mlflow-openai`), as its ground
truth says, and the older conversation attribute on a span made by hand."""

from __future__ import annotations

import json

import pytest

from otelgrade.core.spans import Span
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import LLMFacts, RunFacts, ToolFacts
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


def _node(span_id: str, parent: str | None, name: str, start: int, end: int, kind: str = "CHAIN", **meta: str) -> Span:
    """A span of LangChain's autolog with the run metadata LangGraph gives it (`langgraph_node`, ...)."""
    attrs = {"mlflow.spanType": json.dumps(kind), "metadata": json.dumps({"ls_integration": "langgraph", **meta})}
    return span(span_id, parent, name, attrs, start=start, end=end)


def _chat(span_id: str, parent: str, start: int, answer: dict[str, object]) -> Span:
    request = {"messages": [{"role": "user", "content": "Close account k-1."}]}
    attrs = {
        "mlflow.spanType": '"CHAT_MODEL"',
        "mlflow.spanInputs": json.dumps(request),
        "mlflow.spanOutputs": json.dumps({"choices": [{"message": {"role": "assistant", **answer}}]}),
    }
    return span(span_id, parent, "ChatOpenAI", attrs, start=start, end=start + 1)


def _asks(name: str, call_id: str) -> dict[str, object]:
    return {
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}],
    }


def _supervised(stated: bool, command: bool) -> list[Span]:
    """A LangGraph supervisor handing over to a worker node, under MLflow's schema: the handoff tool's span says
    whom it hands to in LangChain's run metadata (`stated`), returns the graph's `Command` (`command`), or neither."""
    reply = {"type": "tool", "content": "Moved to desk", "tool_call_id": "c1"}
    routed = {"goto": "desk", "graph": "__parent__", "update": {"messages": [reply]}}
    handoff = _node("4", "2", "pass_it_on", 4, 5, "TOOL", langgraph_node="tools", **_destination(stated))
    handoff.attributes["mlflow.spanOutputs"] = json.dumps(routed if command else reply)
    handoff.attributes["tool_call_id"] = '"c1"'
    spans = [
        _node("1", None, "supervisor", 0, 20),
        _node("2", "1", "supervisor", 1, 6, langgraph_node="supervisor"),
        _chat("3", "2", 2, _asks("pass_it_on", "c1")),
        handoff,
        _node("5", "1", "desk", 7, 19, langgraph_node="desk"),
        _chat("6", "5", 8, _asks("delete_account", "c2")),
        _node("7", "5", "delete_account", 10, 11, "TOOL", langgraph_node="tools"),
        _chat("8", "5", 12, {"content": "Account k-1 is closed."}),
    ]
    spans[6].attributes["tool_call_id"] = '"c2"'
    return spans


def _destination(stated: bool) -> dict[str, str]:
    return {"__handoff_destination": "desk"} if stated else {}


@pytest.mark.parametrize(("stated", "command"), [(True, False), (False, True)], ids=["metadata", "command"])
def test_a_graph_nodes_chain_spans_and_a_handoff_tools_destination_make_the_handoff(
    stated: bool, command: bool
) -> None:
    """LangGraph under MLflow's schema: its nodes are CHAIN spans named as the node their metadata names, and a
    supervisor's handoff tool says whom it hands to (`__handoff_destination` in its metadata, or the `Command` it
    returns, whose update holds the tool's answer); the worker's node acting right after it makes the call a
    handoff, whatever the tool is called, not a tool call of the request."""
    (run,) = [r for r in rebuild(_supervised(stated, command)) if r.parent_span_id is None]
    assert [c.name for c in run.tool_calls] == ["delete_account"]
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("supervisor", "desk")]
    assert run.output == "Account k-1 is closed."


def test_a_tool_that_returns_a_command_answers_with_the_tool_message_in_it() -> None:
    classified = classify(_supervised(stated=False, command=True)[3])
    assert classified is not None and isinstance(classified.facts, ToolFacts)
    assert (classified.facts.result, classified.facts.hands_to) == ("Moved to desk", "desk")
