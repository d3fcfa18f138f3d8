"""Haystack's own tracer: every value under `haystack.*`, spans named for what ran (a pipeline's Agent component,
the agent's loop and steps, one model call and one tool run a step). Real SDK spans in the shapes
`haystack.tracing`'s OpenTelemetry backend writes, with content tracing on and off."""

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

QUESTION = "File a 900 euro claim on policy PX-1."
ANSWER = "Claim C-1 is filed."


def _said(role: str, text: str | None = None, call: tuple[str, str, dict[str, Any]] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"text": text}] if text else []
    if call:
        content.append({"tool_call": {"id": call[0], "tool_name": call[1], "arguments": call[2]}})
    return {
        "role": role,
        "meta": {"model": "gpt-4o-mini", "finish_reason": "tool_calls" if call else "stop"},
        "content": content,
    }


def _span(tracer: Any, name: str, content: bool, **attributes: Any) -> Any:
    span = tracer.start_span(name)
    for key, value in attributes.items():
        if content or not key.endswith(("input", "output")):
            span.set_attribute(key, value)
    return span


def _trace(content: bool) -> list[Trajectory]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("haystack")
    asked = {"messages": [_said("user", QUESTION)]}
    component = _span(
        tracer,
        "haystack.component.run",
        content,
        **{"haystack.component.name": "intake_clerk", "haystack.component.type": "Agent"},
        **{"haystack.component.input": json.dumps(asked)},
        **{
            "haystack.component.output": json.dumps({"messages": [_said("user", QUESTION), _said("assistant", ANSWER)]})
        },
    )
    with trace.use_span(component, end_on_exit=True):
        loop = _span(tracer, "haystack.agent.run", content, **{"haystack.agent.max_steps": 100})
        with trace.use_span(loop, end_on_exit=True):
            for step, reply in enumerate(
                (_said("assistant", call=("c1", "file_claim", {"amount": 900})), _said("assistant", ANSWER))
            ):
                with trace.use_span(
                    _span(tracer, "haystack.agent.step", content, **{"haystack.agent.step": step}), end_on_exit=True
                ):
                    _span(
                        tracer,
                        "haystack.agent.step.llm",
                        content,
                        **{"haystack.agent.step.llm.output": json.dumps({"replies": [reply]})},
                    ).end()
                    if step == 0:
                        _span(
                            tracer,
                            "haystack.agent.step.tool",
                            content,
                            **{"haystack.tool.name": "file_claim", "haystack.agent.step.tool.input": '{"amount": 900}'},
                            **{"haystack.agent.step.tool.output": "claim C-1 filed"},
                        ).end()
    provider.shutdown()
    return rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)


def test_an_agent_component_traced_by_haystack_s_own_tracer_is_a_run_with_its_calls() -> None:
    (run,) = _trace(content=True)
    assert (run.agent_name, run.source, run.input, run.output) == ("intake_clerk", "haystack", QUESTION, ANSWER)
    assert len(run.llm_calls) == 2 and run.llm_calls[0].model == "gpt-4o-mini"
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("file_claim", {"amount": 900}, "claim C-1 filed")
    ]
    assert run.lacks == []


def test_with_content_tracing_off_the_run_keeps_its_calls_and_lacks_their_content() -> None:
    (run,) = _trace(content=False)
    assert run.agent_name == "intake_clerk" and len(run.llm_calls) == 2
    assert [c.name for c in run.tool_calls] == ["file_claim"]  # the guardrails still see the call
    assert {"input", "output", "tool_arguments", "tool_results"} <= set(run.lacks)
