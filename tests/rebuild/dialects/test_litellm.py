"""LiteLLM's own OpenTelemetry callback, as it writes a tool loop with the real OTel SDK: a `raw_gen_ai_request`
span per successful call (the provider's messages and choices as Python reprs), and each call's GenAI attributes
on the application's span, the last call's over the earlier ones', a failure's `error.*` beside them."""

from __future__ import annotations

import json
from concurrent.futures import Future
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import build_grader, grade_safely
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

SYSTEM = {"role": "system", "content": "You answer for the claims desk."}


def _rebuild(build: Any) -> list[Trajectory]:
    """The loop's trace as the real OpenTelemetry SDK exports it (OTLP protobuf), rebuilt."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("claims-desk"), provider.get_tracer("litellm"))
    provider.shutdown()
    body = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return rebuild([s.read() for s in decode_traces(body).spans])


def _asks(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": function}]}


def _answer(call_id: str, result: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": result}


def _completion(tracer: Any, sent: list[dict[str, Any]], reply: dict[str, Any], logging: bool = True) -> None:
    """One successful call: its raw span (with message logging on), then its attributes on the current span."""
    finish = "tool_calls" if reply.get("tool_calls") else "stop"
    if logging:
        with tracer.start_as_current_span("raw_gen_ai_request") as raw:
            raw.set_attribute("llm.openai.messages", str(sent))
            raw.set_attribute("llm.openai.choices", str([{"finish_reason": finish, "message": reply}]))
            raw.set_attribute("llm.openai.model", "gpt-4o-mini")
            raw.set_attribute("llm.openai.usage", str({"prompt_tokens": 60, "completion_tokens": 12}))
    _record(sent, {"gen_ai.response.finish_reasons": json.dumps([finish])}, logging)
    trace.get_current_span().set_status(Status(StatusCode.OK))


def _record(sent: list[dict[str, Any]], extra: dict[str, Any], logging: bool = True) -> None:
    """The call's attributes on the span current when it was logged (the application's)."""
    parts = [
        {**{k: v for k, v in m.items() if k != "content"}, "parts": [{"type": "text", "content": m.get("content")}]}
        for m in sent
    ]
    attributes = {
        "litellm.call_id": f"call-{len(sent)}",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.system": "openai",
        "gen_ai.usage.input_tokens": 60,
        "gen_ai.usage.output_tokens": 12,
        "llm.request.type": "completion",
        **({"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(parts)} if logging else {}),
        **extra,
    }
    trace.get_current_span().set_attributes(attributes)


def _claim_loop(logging: bool = True, fails: bool = False) -> Any:
    """A hand-written loop: the model looks a policy up, then answers (or, with `fails`, its backend fails)."""
    request = [SYSTEM, {"role": "user", "content": "What does policy PX-2 cover?"}]
    asked = _asks("c1", "lookup_policy", {"policy_id": "PX-2"})
    then = [*request, asked, _answer("c1", "travel cover")]

    def build(app: Any, litellm: Any) -> None:
        with app.start_as_current_span("handle_request"):
            _completion(litellm, request, asked, logging)
            if fails:
                _record(then, {"error.type": "ServiceUnavailableError", "error.message": "backend overloaded"}, logging)
            else:
                _completion(litellm, then, {"role": "assistant", "content": "PX-2 has travel cover."}, logging)

    return build


def test_each_raw_request_span_is_a_call_and_the_attributes_on_the_application_span_add_none() -> None:
    (run,) = _rebuild(_claim_loop())
    assert [c.finish_reason for c in run.llm_calls] == ["tool_calls", "stop"]
    assert [(t.name, t.arguments, t.result) for t in run.tool_calls] == [
        ("lookup_policy", {"policy_id": "PX-2"}, "travel cover")
    ]
    assert (run.input, run.output, run.status, run.lacks) == (
        "What does policy PX-2 cover?",
        "PX-2 has travel cover.",
        "ok",
        [],
    )


def test_a_failure_recorded_on_the_application_span_is_the_runs_last_call_and_fails_the_run() -> None:
    """The failed call left no span of its own; its record (the request it sent, `error.*`) stands beside the
    earlier call's finish reason and usage, which are not its."""
    (run,) = _rebuild(_claim_loop(fails=True))
    assert [(c.error, c.finish_reason, c.output_tokens) for c in run.llm_calls] == [
        (False, "tool_calls", 12),
        (True, None, None),
    ]
    assert [(t.name, t.result) for t in run.tool_calls] == [("lookup_policy", "travel cover")]
    assert (run.status, run.output, run.lacks) == ("error", None, [])
    assert run.error == "backend overloaded"  # what the record says, though the span's status stayed OK


def test_with_message_logging_off_the_run_lacks_its_calls_and_no_safety_grader_passes_it() -> None:
    """Only the last call's attributes remain, on the application's span: neither how many calls were made nor
    which tools they asked for is on the trace."""
    (run,) = _rebuild(_claim_loop(logging=False))
    assert {"llm_calls", "tool_calls", "input", "output"} <= set(run.lacks)
    verdict = grade_safely(build_grader("tools_not_called", {"tools": ["lookup_policy"]}), run)
    assert not isinstance(verdict, Future) and verdict.outcome == "skipped"
    (failed,) = _rebuild(_claim_loop(logging=False, fails=True))
    assert failed.status == "error"


def _anthropic(tracer: Any, sent: list[dict[str, Any]], blocks: list[dict[str, Any]], stop: str) -> None:
    """A raw request to the Messages API: the system prompt beside the messages, content blocks back."""
    with tracer.start_as_current_span("raw_gen_ai_request") as raw:
        raw.set_attribute("llm.anthropic.system", "You answer for the claims desk.")
        raw.set_attribute("llm.anthropic.messages", str(sent))
        raw.set_attribute("llm.anthropic.content", str(blocks))
        raw.set_attribute("llm.anthropic.stop_reason", stop)
        raw.set_attribute("llm.anthropic.usage", str({"input_tokens": 40, "output_tokens": 9}))


def test_a_raw_request_to_the_messages_api_shows_the_tool_the_model_called() -> None:
    request = {"role": "user", "content": "Erase my record, id u-1."}
    use = {"type": "tool_use", "id": "tu1", "name": "delete_account", "input": {"user_id": "u-1"}}
    result = {"type": "tool_result", "tool_use_id": "tu1", "content": "deleted"}

    def build(app: Any, litellm: Any) -> None:
        with app.start_as_current_span("handle_request"):
            _anthropic(litellm, [request], [use], "tool_use")
            sent: list[dict[str, Any]] = [
                request,
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ]
            _anthropic(litellm, sent, [{"type": "text", "text": "Your record is erased."}], "end_turn")

    (run,) = _rebuild(build)
    assert [c.finish_reason for c in run.llm_calls] == ["tool_use", "end_turn"]
    assert [(t.name, t.arguments, t.result) for t in run.tool_calls] == [
        ("delete_account", {"user_id": "u-1"}, "deleted")
    ]
    assert (run.input, run.output) == ("Erase my record, id u-1.", "Your record is erased.")
    verdict = grade_safely(build_grader("tools_not_called", {"tools": ["delete_account"]}), run)
    assert not isinstance(verdict, Future) and verdict.outcome == "fail"


def test_an_agent_span_that_litellm_writes_its_calls_over_stays_the_agents() -> None:
    """A framework traced by another instrumentation calls its model through LiteLLM: the agent's span keeps its
    kind, and the raw spans beneath it are its calls."""

    request = [SYSTEM, {"role": "user", "content": "What does policy PX-2 cover?"}]
    asked = _asks("c1", "lookup_policy", {"policy_id": "PX-2"})

    def build(app: Any, litellm: Any) -> None:
        with app.start_as_current_span("claims_desk.agent") as desk:
            desk.set_attribute("traceloop.span.kind", "agent")
            desk.set_attribute("traceloop.entity.name", "claims_desk")
            _completion(litellm, request, asked)
            then = [*request, asked, _answer("c1", "travel cover")]
            _completion(litellm, then, {"role": "assistant", "content": "PX-2 has travel cover."})

    runs = _rebuild(build)
    assert [(r.agent_name, len(r.llm_calls), [t.name for t in r.tool_calls]) for r in runs] == [
        ("claims_desk", 2, ["lookup_policy"])
    ]
