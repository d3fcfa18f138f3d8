"""VoltAgent's own observability: `entity.*` agents, `llm:*` spans one per generation, `tool.execution:*` spans,
and a supervisor delegating to a sub-agent with a tool that names it in a list argument. Real SDK spans in the
shapes `@voltagent/core` writes."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

QUESTION = "My policy is PX-1; file a claim for 900 EUR."
ANSWER = "Claim C-1 is filed on PX-1."
TASK = "File a claim on PX-1 for 900 EUR."
LEAD: dict[str, Any] = {"entity.id": "lead", "entity.type": "agent", "entity.name": "lead"}
DESK: dict[str, Any] = {**LEAD, "subagent.id": "desk", "subagent.name": "desk", "voltagent.is_subagent": True}


def _llm(tracer: Any, scope: dict[str, Any], asked: str, fail: bool = False) -> None:
    prompt = [{"role": "system", "content": "You act."}, {"role": "user", "content": [{"type": "text", "text": asked}]}]
    with tracer.start_as_current_span(
        "llm:streamText",
        attributes={
            **scope,
            "span.type": "llm",
            "llm.model": "gpt-4o-mini",
            "llm.messages": json.dumps(prompt),
            "llm.usage.prompt_tokens": 90,
            "llm.finish_reason": "stop",
        },
    ) as span:
        if fail:
            span.set_status(Status(StatusCode.ERROR, "model backend unavailable"))


def _tool(tracer: Any, scope: dict[str, Any], name: str, call_id: str, arguments: dict[str, Any], result: str) -> Any:
    return tracer.start_as_current_span(
        f"tool.execution:{name}",
        attributes={
            **scope,
            "span.type": "tool",
            "tool.name": name,
            "tool.call.id": call_id,
            "input": json.dumps(arguments),
            "output": result,
        },
    )


def _trace(fail: bool = False) -> list[Trajectory]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("@voltagent/core")
    lead_attrs = {**LEAD, "voltagent.operation_id": "op-1", "input": QUESTION}
    with tracer.start_as_current_span("lead", attributes=lead_attrs) as lead:
        _llm(tracer, LEAD, QUESTION, fail)
        if not fail:
            with _tool(tracer, LEAD, "lookup_policy", "call_1", {"policy_id": "PX-1"}, "home cover"):
                pass
        targets = {"task": TASK, "targetAgents": ["desk"]}
        with _tool(tracer, LEAD, "delegate_task", "call_2", targets, '[{"agentName":"desk"}]'):
            ui = [{"role": "user", "parts": [{"type": "text", "text": TASK}]}]
            with tracer.start_as_current_span("subagent:desk", attributes={**DESK, "input": json.dumps(ui)}) as desk:
                _llm(tracer, DESK, TASK, fail)
                if fail:
                    desk.set_status(Status(StatusCode.ERROR, "model backend unavailable"))
                else:
                    with _tool(tracer, DESK, "file_claim", "call_3", {"policy_id": "PX-1"}, "claim C-1 filed"):
                        pass
                    desk.set_attribute("output", "Claim C-1 is filed.")
        if fail:
            lead.set_status(Status(StatusCode.ERROR, "model backend unavailable"))
        else:
            lead.set_attribute("output", ANSWER)
    body = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return rebuild(decode_traces(body).spans)


def _request(runs: list[Trajectory]) -> Trajectory:
    (request,) = [r for r in runs if r.parent_span_id is None]
    return request


def test_a_supervisor_run_holds_its_sub_agents_tool_calls_and_its_delegation_is_a_handoff() -> None:
    run = _request(_trace())
    assert (run.source, run.agent_name, run.input, run.output) == ("voltagent", "lead", QUESTION, ANSWER)
    assert [(t.name, t.arguments, t.result) for t in run.tool_calls] == [
        ("lookup_policy", {"policy_id": "PX-1"}, "home cover"),
        ("file_claim", {"policy_id": "PX-1"}, "claim C-1 filed"),
    ]
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("lead", "desk")]


def test_a_span_per_generation_leaves_the_run_lacking_its_model_calls_and_conversation() -> None:
    runs = _trace()
    assert _request(runs).lacks == ["messages", "llm_calls"]
    (desk,) = [r for r in runs if r.agent_name == "desk"]
    assert desk.input == TASK  # the sub-agent's request, from its UI messages


def test_a_failed_request_with_no_answer_lacks_no_answer() -> None:
    run = _request(_trace(fail=True))
    assert (run.status, run.output) == ("error", None)
    assert run.lacks == ["messages", "llm_calls"]
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("lead", "desk")]
