"""Mastra's observability export: GenAI-convention spans, with the run's request and answer on the agent span
in Mastra's own attributes (`mastra.agent_run.input`: text or chat messages; `mastra.agent_run.output`:
`{"text": ...}`). Model and tool spans are plain GenAI conventions, left to `genai.py`.
"""

from __future__ import annotations

from dataclasses import replace

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import Facts

_TYPE = "mastra.span.type"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    if attrs.get(_TYPE) != "agent_run":
        return None
    run = genai.agent(span)
    request = attrs.get("mastra.agent_run.input")
    messages = msg.from_openai(msg.as_list(request)) if isinstance(request, str) and request[:1] == "[" else []
    answer = msg.loads(attrs.get("mastra.agent_run.output"))
    return replace(
        run,
        input=run.input
        or (msg.last_user_text(messages) if messages else request if isinstance(request, str) else None),
        output=run.output or (answer.get("text") if isinstance(answer, dict) else None),
    )


DIALECT = Dialect(
    name="mastra",
    priority=90,
    marks=frozenset({_TYPE}),
    read=read,
    blobs=frozenset({"mastra.agent_run.input", "mastra.agent_run.output"}),
    blob_prefixes=("mastra.model_step.", "mastra.model_generation.", "mastra.metadata."),
)
