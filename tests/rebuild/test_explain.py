"""`otelgrade inspect`'s reading of a trace: every span, the dialect that read it, its role and why."""

from __future__ import annotations

from otelgrade.rebuild.explain import explain_trace
from tests.rebuild.genai_spans import span
from tests.rebuild.test_trace import weather_run


def test_every_span_is_read_in_tree_order_with_its_role_and_why() -> None:
    runs, readings = explain_trace([*weather_run(), span("5", "1", "GET /cache", 7, 8, http__route="/cache")])
    assert len(runs) == 1
    assert [(r.depth, r.role) for r in readings[:4]] == [(0, "run"), (1, "LLM call"), (1, "tool call"), (1, "LLM call")]
    assert readings[0].why == "the root of agent run weather_agent (ok)"
    assert readings[2].why == "`get_weather` at step 1"
    unread = readings[4]
    assert unread.dialect is None and unread.name == "GET /cache"
