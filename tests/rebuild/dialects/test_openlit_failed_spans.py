"""OpenLIT's spans that failed keep their name (`execute_tool <tool>`) and little else: no mark, no operation name.
They are still OpenLIT's, by their scope. Real SDK spans in the shape its smolagents instrumentation writes."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

ASK = "Apply for the drought grant for farm FM-3."


def _chat(tracer: Any, output: dict[str, Any]) -> None:
    with tracer.start_as_current_span("chat gpt-4o-mini") as s:
        s.set_attribute("telemetry.sdk.name", "openlit")
        s.set_attribute("gen_ai.operation.name", "chat")
        s.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        s.set_attribute(
            "gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": ASK}]}])
        )
        s.set_attribute("gen_ai.output.messages", json.dumps([output]))


def _run() -> list[Trajectory]:
    """An agent whose tool raised: OpenLIT ends the tool's span with its error and only `error.type`."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "farm-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agents, model = (provider.get_tracer(f"openlit.instrumentation.{lib}") for lib in ("smolagents", "openai"))
    with agents.start_as_current_span("invoke_agent grant_office") as agent:
        agent.set_attribute("telemetry.sdk.name", "openlit")
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "grant_office")
        call = {"type": "tool_call", "id": "call_1", "name": "apply_grant", "arguments": {"farm_id": "FM-3"}}
        _chat(model, {"role": "assistant", "parts": [call]})
        with agents.start_as_current_span("execute_tool apply_grant", record_exception=False) as failed:
            failed.set_attribute("error.type", "AgentToolExecutionError")
            failed.record_exception(RuntimeError("grant portal closed"))
            failed.set_status(trace.Status(trace.StatusCode.ERROR, "AgentToolExecutionError: grant portal closed"))
        _chat(model, {"role": "assistant", "parts": [{"type": "text", "content": "The grant portal is closed."}]})
    provider.shutdown()
    return rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)


def test_a_tool_span_that_failed_is_the_calls_failed_execution() -> None:
    (run,) = _run()
    assert [(c.name, c.call_id, c.error, c.witnesses) for c in run.tool_calls] == [
        ("apply_grant", "call_1", True, ["request", "execution"])
    ]
    assert run.source == "openlit" and run.output == "The grant portal is closed."


def test_a_failed_crewai_agent_left_unnamed_is_the_role_its_prompt_gives_it() -> None:
    """OpenLIT writes a CrewAI agent's role only when its run succeeds; a crew's manager, for which it has no role
    to put in the span's name, fails as `invoke_agent agent` with only `error.type`. The role CrewAI's prompt gives
    the manager's model (`You are {role}. ...` then `Your personal goal is: ...`) names it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "grid-crew"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    crew, model = (provider.get_tracer(f"openlit.instrumentation.{lib}") for lib in ("crewai", "openai"))
    prompt = "You are Shift Lead. You run the shift.\nYour personal goal is: Keep the grid up."
    with crew.start_as_current_span("invoke_agent agent", record_exception=False) as manager:
        with model.start_as_current_span("chat gpt-4o-mini") as s:
            s.set_attribute("telemetry.sdk.name", "openlit")
            s.set_attribute("gen_ai.operation.name", "chat")
            s.set_attribute("gen_ai.system_instructions", json.dumps([{"type": "text", "content": prompt}]))
            s.set_attribute(
                "gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": ASK}]}])
            )
        manager.set_attribute("error.type", "InternalServerError")
        manager.set_status(trace.Status(trace.StatusCode.ERROR, "InternalServerError: model backend unavailable"))
    provider.shutdown()
    (run,) = rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)
    assert (run.agent_name, run.status) == ("Shift Lead", "error")


def test_a_model_call_that_failed_is_the_loops_call_and_fails_the_request() -> None:
    """A provider SDK's loop under OpenLIT, in the application's own span: the second model call failed, and OpenLIT
    ended its span (`chat <model>`) with its error and no attribute at all. It is the loop's call (beside the
    other), and the request failed."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "farm-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app, model = provider.get_tracer("farm-desk"), provider.get_tracer("openlit.instrumentation.anthropic")
    with app.start_as_current_span("handle_request"):
        call = {"type": "tool_call", "id": "toolu_1", "name": "apply_grant", "arguments": {"farm_id": "FM-3"}}
        _chat(model, {"role": "assistant", "parts": [call]})
        with model.start_as_current_span("chat gpt-4o-mini", record_exception=False) as failed:
            failed.record_exception(RuntimeError("model backend unavailable"))
            failed.set_status(trace.Status(trace.StatusCode.ERROR, "InternalServerError: model backend unavailable"))
    provider.shutdown()
    (run,) = rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)
    assert (run.status, len(run.llm_calls)) == ("error", 2)
    assert "model backend unavailable" in (run.error or "")
