"""Content an instrumentation logs as GenAI events while the application's span is current, not the model call's
(OpenLLMetry with `use_attributes=False`): each event is read into the model call running when it was logged;
the calls a response asked for stand beside its message; tool results logged without their call id answer the
previous response's calls in order."""

from __future__ import annotations

from typing import Any

from otelgrade.core.spans import Event, LogEvent
from otelgrade.rebuild import rebuild
from tests.rebuild.genai_spans import TRACE, span

S = 10**9
QUESTION = "Credit 64 euros back."


def _logged(name: str, at: float, body: dict[str, Any]) -> LogEvent:
    return LogEvent(TRACE, "1".rjust(16, "0"), Event(name, int(at * S), {"gen_ai.provider.name": "openai"}, body))


def _chat(span_id: str, start: int, end: int) -> Any:  # content off on the span: model and tokens only
    return span(
        span_id, "1", "openai.chat", start, end, gen_ai__operation__name="chat", gen_ai__request__model="gpt-4o"
    )


def test_content_logged_under_the_application_span_is_read_into_the_model_call_running_then() -> None:
    spans = [span("1", None, "handle_request", 0, 10), _chat("2", 1, 2), _chat("3", 5, 6)]
    asked = {"id": "c1", "type": "function", "function": {"name": "credit", "arguments": '{"amount": 64}'}}
    logs = [
        _logged("gen_ai.user.message", 1.1, {"content": QUESTION}),
        _logged(
            "gen_ai.choice",
            1.9,
            {"index": 0, "message": {"content": None}, "finish_reason": "tool_calls", "tool_calls": [asked]},
        ),
        _logged("gen_ai.user.message", 5.1, {"content": QUESTION}),
        _logged("gen_ai.assistant.message", 5.1, {"content": None}),
        _logged("gen_ai.tool.message", 5.1, {"content": "error: credit window has closed"}),
        _logged(
            "gen_ai.choice",
            5.9,
            {"index": 0, "message": {"content": "I could not credit it."}, "finish_reason": "stop"},
        ),
    ]
    (run,) = rebuild(spans, logs)
    assert (run.input, run.output) == (QUESTION, "I could not credit it.")
    assert [(c.name, c.arguments, c.error) for c in run.tool_calls] == [("credit", {"amount": 64}, True)]
    assert "tool_calls" not in run.lacks and "messages" not in run.lacks
