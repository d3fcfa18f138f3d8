"""Model calls with no agent span: one run per chain of calls that continue one another."""

from __future__ import annotations

from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import chat


def user(text: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def assistant(text: str) -> dict[str, object]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def test_a_call_that_does_not_continue_the_last_starts_the_next_run() -> None:
    paris = [user("Weather in Paris?")]
    runs = rebuild_trace(
        [
            chat("1", "0", 1, 2, paris),
            chat("2", "0", 3, 4, [*paris, assistant("12C"), user("And tomorrow?")]),
            chat("3", "0", 5, 6, [user("Book UA123")]),
        ]
    )
    assert [(r.input, len(r.llm_calls)) for r in runs] == [("Weather in Paris?", 2), ("Book UA123", 1)]
