"""An agent called as a tool, under a caller whose own span ended early (a workflow whose handler returned while
its steps ran on): the call returns the called agent's answer, and the caller's last model call is the answer."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import QUESTION, _otlp
from tests.rebuild.test_rebuild import parts_calls, parts_user

MS = 10**6


def _early_ending_caller(tracer: Any) -> None:
    from opentelemetry import trace

    def chat(parent: Any, start: int, end: int, outputs: list[dict[str, Any]]) -> None:
        span = tracer.start_span("chat gpt-4o", context=trace.set_span_in_context(parent), start_time=start * MS)
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.input.messages", json.dumps([parts_user(QUESTION)]))
        span.set_attribute("gen_ai.output.messages", json.dumps(outputs))
        span.end(end_time=end * MS)

    def said(text: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]

    lead = tracer.start_span("invoke_agent lead", start_time=1000 * MS)
    lead.set_attribute("gen_ai.operation.name", "invoke_agent")
    lead.set_attribute("gen_ai.agent.name", "lead")
    chat(lead, 1001, 1002, [parts_calls(("c1", "ask_expert", {"question": "Why?"}))])
    lead.end(end_time=1003 * MS)  # the handler returned; the steps run on under it
    call = tracer.start_span("execute_tool ask_expert", context=trace.set_span_in_context(lead), start_time=1004 * MS)
    call.set_attribute("gen_ai.operation.name", "execute_tool")
    call.set_attribute("gen_ai.tool.name", "ask_expert")
    chat(call, 1005, 1006, said("The meter is faulty."))
    call.end(end_time=1007 * MS)
    chat(lead, 1008, 1009, said("A technician will come."))


def test_the_caller_that_spoke_last_answers_and_the_agent_it_called_returned_its_answer() -> None:
    runs = rebuild(decode_traces(_otlp(_early_ending_caller)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.agent_name == "lead" and len(request.llm_calls) == 3
    assert request.output == "A technician will come."
    assert [(t.name, t.result) for t in request.tool_calls] == [("ask_expert", "The meter is faulty.")]
