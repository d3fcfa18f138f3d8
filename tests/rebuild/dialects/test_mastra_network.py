"""A Mastra agent network's loop, in the shapes `@mastra/otel-exporter` writes with internal spans on: the loop's
workflow states the task and its result, each step that runs what the router chose states it in its input
(`primitiveType`, `primitiveId`, `prompt`); the router's model calls have no span, and the agents it runs are
traced in traces of their own. Real SDK spans."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

TASK = "Close my account, customer c-7310."
ANSWER = "Your account c-7310 is closed."


def _network(kind: str, primitive: str, prompt: str, done: dict[str, Any]) -> list[Trajectory]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("@mastra/otel-exporter")
    state = {"task": TASK, "primitiveId": "", "primitiveType": "none", "iteration": -1}
    chosen = {**state, "primitiveId": primitive, "primitiveType": kind, "prompt": prompt, "iteration": 0}
    result = {**chosen, "isComplete": True, "result": ANSWER}
    loop = {
        "gen_ai.operation.name": "invoke_workflow",
        "mastra.span.type": "workflow_run",
        "mastra.workflow_run.input": json.dumps(state),
        "mastra.workflow_run.output": json.dumps(result),
    }
    with tracer.start_as_current_span("invoke_workflow agent-loop", attributes=loop):
        for name, given, output in (("routing", state, chosen), ("execution", chosen, {**chosen, **done})):
            step = {
                "gen_ai.operation.name": "workflow_step",
                "mastra.span.type": "workflow_step",
                "mastra.workflow_step.input": json.dumps(given),
                "mastra.workflow_step.output": json.dumps(output),
            }
            with tracer.start_as_current_span(f"workflow_step {name}", attributes=step):
                pass
    body = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return rebuild(decode_traces(body).spans)


def test_a_network_that_runs_its_own_tool_is_a_request_with_that_call() -> None:
    done = {"toolName": "delete_account", "toolCallId": "t-1", "result": "account c-7310 deleted"}
    (run,) = _network("tool", "delete_account", '{"user_id": "c-7310"}', done)
    assert (run.input, run.output, run.status) == (TASK, ANSWER, "ok")
    assert [(t.name, t.arguments, t.result) for t in run.tool_calls] == [
        ("delete_account", {"user_id": "c-7310"}, "account c-7310 deleted")
    ]
    assert run.lacks == ["llm_calls"]  # the router's model calls have no span


def test_a_network_that_runs_an_agent_traced_elsewhere_hands_to_it_and_lacks_what_the_agent_did() -> None:
    (run,) = _network("agent", "cover_agent", "Read policy PX-1.", {"result": "Filed."})
    assert (run.input, run.output) == (TASK, ANSWER)
    assert [h.to_agent for h in run.handoffs] == ["cover_agent"]
    assert run.lacks == ["llm_calls", "tool_calls"]  # the agent's calls are in its own trace, the router's nowhere
