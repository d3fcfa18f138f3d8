"""OpenLIT's spans of an agent framework's own runs (the OpenAI Agents SDK): each agent's invocation is
`invoke_agent <agent>`, each of its turns an `invoke_agent` that names no agent, and a handoff an
`invoke_agent <to>` whose `gen_ai.agent.source` is the agent it came from. Real SDK spans in those shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

ASK = "My kitchen flooded; file a claim."


@contextmanager
def _agent(tracer: Any, name: str | None, **attributes: str) -> Iterator[None]:
    with tracer.start_as_current_span(f"invoke_agent {name}" if name else "invoke_agent") as span:
        span.set_attribute("telemetry.sdk.name", "openlit")
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        if name:
            span.set_attribute("gen_ai.agent.name", name)
        for key, value in attributes.items():
            span.set_attribute(key.replace("__", "."), value)
        yield


def _chat(tracer: Any, output: dict[str, Any], told: tuple[dict[str, Any], ...] = ()) -> None:
    with tracer.start_as_current_span("chat gpt-4o-mini") as s:
        s.set_attribute("gen_ai.operation.name", "chat")
        s.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        asked = [{"role": "user", "parts": [{"type": "text", "content": ASK}]}, *told]
        s.set_attribute("gen_ai.input.messages", json.dumps(asked))
        s.set_attribute("gen_ai.output.messages", json.dumps([output]))


def _run() -> list[Trajectory]:
    """A front counter asks for `pass_on` (a word naming nobody), answered by the framework itself; OpenLIT writes
    the handoff as `invoke_agent adjuster` with `gen_ai.agent.source`; the adjuster files the claim."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("openlit.instrumentation.openai_agents")
    with tracer.start_as_current_span("invoke_workflow Agent workflow"):
        with _agent(tracer, "counter"), _agent(tracer, None):
            call = {"type": "tool_call", "id": "c1", "name": "pass_on", "arguments": {}}
            _chat(tracer, {"role": "assistant", "parts": [call]})
            with _agent(tracer, "adjuster", gen_ai__agent__source="counter"):
                pass
        with _agent(tracer, "adjuster"), _agent(tracer, None):
            told = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "{}"}]}
            _chat(tracer, {"role": "assistant", "parts": [{"type": "text", "content": "Claim C-1 filed."}]}, (told,))
    provider.shutdown()
    return rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)


def test_the_handoff_openlit_writes_as_an_invocation_from_its_source_is_a_handoff() -> None:
    request = next(r for r in _run() if r.parent_span_id is None)
    assert request.tool_calls == [] and request.output == "Claim C-1 filed."
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [("counter", "adjuster", "dialect")]
    assert [c.agent for c in request.llm_calls] == ["counter", "adjuster"]  # a nameless turn is its agent's step


@contextmanager
def _reply(tracer: Any, agent: str, kind: str = "generate_reply", failed: bool = False) -> Iterator[None]:
    """An agent's message as OpenLIT's AG2 instrumentation writes it: `execute_task <agent>` claiming a model call
    (no model named); one that failed keeps only `error.type`."""
    with tracer.start_as_current_span(f"execute_task {agent}") as span:
        if failed:
            span.set_attribute("error.type", "InternalServerError")
            span.set_status(StatusCode.ERROR)
        else:
            span.set_attribute("telemetry.sdk.name", "openlit")
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.agent.name", agent)
            span.set_attribute("gen_ai.agent.message_type", kind)
            span.set_attribute("gen_ai.request.model", "unknown")
            span.set_attribute("gen_ai.usage.input_tokens", 40)
        yield


def _group_chat(second_fails: bool = False) -> list[Trajectory]:
    """A group chat: the clerk's model asks for `lookup`, the clerk runs it (a reply with no model call) and
    sends the result on, the adjuster's model answers (or fails)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("openlit.instrumentation.ag2")
    calls = provider.get_tracer("openlit.instrumentation.openai")
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {}}
    said = {"role": "assistant", "parts": [{"type": "text", "content": "Claim C-1 found."}]}
    told = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "C-1"}]}
    with tracer.start_as_current_span("invoke_workflow GroupChat") as chat:
        chat.set_attribute("gen_ai.operation.name", "invoke_workflow")
        with _reply(tracer, "clerk"):
            _chat(calls, {"role": "assistant", "parts": [call]})
        with _reply(tracer, "clerk"), _reply(tracer, "clerk", "send"), _reply(tracer, "adjuster", "receive"):
            pass
        with _reply(tracer, "adjuster", failed=second_fails):
            if second_fails:
                with calls.start_as_current_span("chat gpt-4o-mini") as failing:
                    failing.set_attribute("telemetry.sdk.name", "openlit")
                    failing.set_attribute("gen_ai.operation.name", "chat")
                    failing.set_attribute("gen_ai.request.model", "gpt-4o-mini")
                    failing.set_attribute("error.type", "InternalServerError")
                    failing.set_status(StatusCode.ERROR)
            else:
                _chat(calls, said, (told,))
    provider.shutdown()
    return rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)


def test_an_agents_reply_that_claims_a_model_call_is_its_turn_not_a_second_call() -> None:
    request = next(r for r in _group_chat() if r.parent_span_id is None)
    assert [c.agent for c in request.llm_calls] == ["clerk", "adjuster"]  # not the six spans that say `chat`
    assert [c.name for c in request.tool_calls] == ["lookup"]
    assert request.output == "Claim C-1 found."


def test_a_reply_that_failed_keeps_only_its_name_and_is_still_its_agents_turn() -> None:
    request = next(r for r in _group_chat(second_fails=True) if r.parent_span_id is None)
    assert [c.agent for c in request.llm_calls] == ["clerk", "adjuster"]
    assert request.status == "error"
