"""One trace in, its runs out: an agent's invocation with its model and tool calls, in the conventions' shapes."""

from __future__ import annotations

from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import agent, chat, span, tool

ASK = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]


def weather_run(failed: bool = False) -> list:  # type: ignore[type-arg]
    return [
        agent("1", None, "weather_agent", 0, 10, error=failed),
        chat("2", "1", 1, 2, ASK, gen_ai__response__finish_reasons=["tool_calls"]),
        tool("3", "1", "get_weather", 3, 4, "call_1", "12C rain"),
        chat("4", "1", 5, 6, ASK, gen_ai__response__finish_reasons=["stop"]),
    ]


def test_an_agent_invocation_is_one_run_holding_its_calls_in_order() -> None:
    (run,) = rebuild_trace(weather_run())
    assert (run.agent_name, run.source, run.input) == ("weather_agent", "genai", "Weather in Paris?")
    assert [c.finish_reason for c in run.llm_calls] == ["tool_calls", "stop"]
    assert [(t.name, t.call_id, t.result) for t in run.tool_calls] == [("get_weather", "call_1", "12C rain")]
    assert run.steps == 2 and run.service_name == "travel"


def test_an_agent_span_in_error_makes_the_run_an_error() -> None:
    (run,) = rebuild_trace(weather_run(failed=True))
    assert run.status == "error"


def test_a_trace_with_no_agent_or_model_call_has_no_run() -> None:
    assert rebuild_trace([span("1", None, "GET /health", 0, 1, http__route="/health")]) == []
    assert rebuild_trace([]) == []
