"""Each rebuild rule, written once and generally, shown on the real capture of a framework that needs it."""

from __future__ import annotations

import subprocess
import sys

from otelgrade.core.trajectory import Trajectory
from otelgrade.rebuild.tool_calls import real_id
from tests.captures import read_folder
from tests.paths import FIXTURES

FRAMEWORKS = FIXTURES / "frameworks"


def runs(source: str, scenario: str) -> list[Trajectory]:
    return read_folder(FRAMEWORKS / source / scenario)


def inspect(source: str, scenario: str) -> str:
    folder = FRAMEWORKS / source / scenario
    command = [sys.executable, "-m", "otelgrade", "inspect", str(folder)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=True).stdout


def test_a_graph_node_is_a_step_not_an_agent_langgraph_react() -> None:
    (run,) = runs("langgraph-react-openinference", "many_calls")  # its node is named `agent`
    assert run.agent_name == "travel_agent" and len(run.llm_calls) == 8 and len(run.tool_calls) == 7
    assert "runs graph node `agent`: a step of its run" in inspect("langgraph-react-openinference", "happy")


def test_a_tool_error_that_fails_the_graph_fails_the_run_langgraph_react() -> None:
    (run,) = runs("langgraph-react-openinference", "graph_error")
    assert run.status == "error" and run.output is None and run.tool_calls[-1].error


def test_wrapper_and_client_spans_of_one_model_call_are_one_call_llamaindex() -> None:
    (run,) = runs("llamaindex", "happy")  # three LLM spans per call: preparation, wrapper, client
    assert len(run.llm_calls) == 3
    shown = inspect("llamaindex", "happy")
    assert "wraps the model call of a span below it" in shown and "it made no model call" in shown


def test_without_an_agent_span_each_workflow_is_a_run_llamaindex() -> None:
    assert len(runs("llamaindex", "two_runs")) == 2
    (failed,) = runs("llamaindex", "agent_error")
    assert failed.status == "error"


def test_an_answer_tool_is_the_output_not_a_tool_call_smolagents() -> None:
    (run,) = runs("smolagents", "happy")
    assert [c.name for c in run.tool_calls] == ["search_flights", "book_flight"]
    assert run.output and "UA123" in run.output


def test_a_lost_agent_span_still_fails_its_run_smolagents() -> None:
    (run,) = runs("smolagents", "agent_error")  # the AGENT span is never exported when the model fails
    assert run.status == "error" and run.output is None
    assert "never arrived" in inspect("smolagents", "agent_error")


def test_bookkeeping_spans_are_not_tool_calls_adk() -> None:
    (run,) = runs("google-adk", "parallel")  # ADK adds `execute_tool (merged)` around parallel calls
    assert [c.name for c in run.tool_calls] == ["get_weather", "get_weather"]
    assert real_id("<not specified>") is None and real_id("call_1") == "call_1"


def test_a_handoff_is_part_of_the_request_and_a_nested_run_adk() -> None:
    request, weather = runs("google-adk", "subagent")  # front_desk transfers to weather_desk, which answers
    assert (request.agent_name, request.output) == ("front_desk", "It is 18C and sunny in Tokyo.")
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("front_desk", "weather_desk")]
    assert [c.name for c in request.tool_calls] == ["get_weather"] and len(request.llm_calls) == 3
    assert weather.parent_span_id == request.span_id and weather.input == request.input


def test_a_handoff_between_agents_of_a_team_links_them_autogen() -> None:
    request, billing = runs("autogen", "handoff")  # Swarm: the agents are not siblings in the span tree
    assert billing.parent_span_id == request.span_id and billing.input == request.input
    assert request.agents == ["travel_agent", "billing_agent"] and request.handoffs[0].to_agent == "billing_agent"


def test_model_calls_recorded_by_the_framework_s_event_logger_autogen() -> None:
    (run,) = runs("autogen", "happy")  # no span per model call; the event logger records each
    assert len(run.llm_calls) == 3 and run.output and "UA123" in run.output
    (bare,) = runs("autogen-default", "happy")
    assert "llm_calls" in bare.lacks and "input" in bare.lacks


def test_a_failed_run_has_no_answer_its_error_text_is_the_error_agno() -> None:
    (run,) = runs("agno", "agent_error")  # agno puts the error text where the answer would be
    assert run.status == "error" and run.output is None and run.error


def test_a_delegation_is_a_handoff_and_the_coworker_a_nested_run_crewai() -> None:
    request, *own = runs("crewai", "handoff")  # delegation runs the coworker with no agent span of its own
    assert [c.name for c in request.tool_calls] == ["book_flight"] and len(request.llm_calls) == 4
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("travel_agent", "booking_agent")]
    manager, coworker = own
    assert [c.name for c in manager.tool_calls] == ["delegate_work_to_coworker"]
    assert coworker.agent_name == "booking_agent" and coworker.parent_span_id == manager.span_id


def test_tool_names_stay_as_the_model_saw_them_semantic_kernel() -> None:
    (run,) = runs("semantic-kernel", "happy")
    assert [c.name for c in run.tool_calls] == ["Travel-search_flights", "Travel-book_flight"]


def test_the_request_and_answer_of_an_agent_span_mastra() -> None:
    (run,) = runs("mastra", "happy")
    assert run.input and "SFO" in run.input and run.output and "UA123" in run.output


def test_a_tool_message_result_carries_its_call_id_langgraph_react() -> None:
    (run,) = runs("langgraph-react-openinference", "parallel")  # the two calls ran concurrently
    assert [(c.arguments, c.result) for c in run.tool_calls] == [
        ({"city": "Paris"}, "12C rain"),
        ({"city": "Tokyo"}, "18C sunny"),
    ]


def test_a_tool_result_is_the_tool_s_own_value_not_its_framework_s_envelope_adk_traceloop() -> None:
    """ADK wraps a returned string as {"result": ...}; Traceloop records LangChain's callback output, a serialized
    ToolMessage beside the callback's arguments: the result is what the tool returned."""
    (adk,) = runs("google-adk", "happy")
    (langgraph,) = runs("langgraph-traceloop", "happy")
    for run in (adk, langgraph):
        assert [c.result for c in run.tool_calls] == ["UA123 09:00 $320 (SFO-JFK)", "booked ABC123456"]
