"""OpenLIT around a hand-written OpenAI loop with content capture off (`capture_message_content=False`): no message
text is on the trace, only the calls each response asked for (`gen_ai.tool.name`, `.call.id`, `gen_ai.tool.args`,
comma-joined) and the finish reasons. Real SDK spans in the shape `openlit.instrumentation.openai` writes them."""

from __future__ import annotations

from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

Asked = tuple[tuple[str, str, str], ...]  # (call id, tool, JSON arguments) a response asked for


def _chat(tracer: Any, asked: Asked, tokens: int) -> None:
    with tracer.start_as_current_span("chat gpt-4o-mini") as s:
        s.set_attribute("telemetry.sdk.name", "openlit")
        s.set_attribute("gen_ai.operation.name", "chat")
        s.set_attribute("gen_ai.provider.name", "openai")
        s.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        s.set_attribute("gen_ai.response.finish_reasons", ["tool_calls" if asked else "stop"])
        s.set_attribute("gen_ai.usage.input_tokens", tokens)
        s.set_attribute("gen_ai.usage.output_tokens", 12)
        if asked:
            s.set_attribute("gen_ai.tool.name", ", ".join(name for _, name, _ in asked))
            s.set_attribute("gen_ai.tool.call.id", ", ".join(call_id for call_id, _, _ in asked))
            s.set_attribute("gen_ai.tool.args", ", ".join(arguments for _, _, arguments in asked))


def _loop(*requests: tuple[Asked, ...]) -> list[Trajectory]:
    """The application's one span around each request's model calls (each a response's asked calls, the last
    none: the answer), all of them in one trace."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "claims-helpline"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app, openlit = provider.get_tracer("claims-helpline"), provider.get_tracer("openlit.instrumentation.openai")
    tokens = 60
    with app.start_as_current_span("handle_request"):
        for responses in requests:
            for asked in (*responses, ()):
                _chat(openlit, asked, tokens)
                tokens += 10
    provider.shutdown()
    return rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)


QUOTE = (("call_1", "premium_quote", '{"age": 40}'),)
STATUS = (("call_2", "claim_status", '{"claim_id": "C-1"}'), ("call_3", "claim_status", '{"claim_id": "C-2"}'))


def test_the_calls_a_response_asked_for_keep_their_arguments() -> None:
    """OpenLIT's OpenAI instrumentation writes the asked calls' arguments to `gen_ai.tool.args`, comma-joined."""
    (run,) = _loop((STATUS,))
    assert [(c.name, c.call_id, c.arguments) for c in run.tool_calls] == [
        ("claim_status", "call_2", {"claim_id": "C-1"}),
        ("claim_status", "call_3", {"claim_id": "C-2"}),
    ]
    assert "tool_arguments" not in run.lacks


def test_two_requests_under_one_application_span_are_two_runs_split_at_the_answer() -> None:
    """No text tells the loops apart, but the first loop's last response asked for nothing: it answered."""
    runs = _loop((QUOTE,), (STATUS,))
    assert [([c.name for c in r.tool_calls], len(r.llm_calls)) for r in runs] == [
        (["premium_quote"], 2),
        (["claim_status", "claim_status"], 2),
    ]


def test_the_answer_no_text_shows_is_lacking_not_absent() -> None:
    """The loop answered (its last response asked for no call), but its text is not on the trace, and no agent span
    records it: the run lacks its output, as it lacks the conversation and the tools' results."""
    (run,) = _loop((QUOTE,))
    assert run.output is None and run.status == "ok"
    assert {"output", "messages", "tool_results"} <= set(run.lacks)
