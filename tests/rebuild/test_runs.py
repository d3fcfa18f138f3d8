"""Each agent's runs: an agent invoked inside another's is a run of its own, nested, and the request holds both."""

from __future__ import annotations

import json

from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import agent, chat, span, tool

ASK = [{"role": "user", "parts": [{"type": "text", "content": "Book me a flight"}]}]


def test_a_nested_agent_is_its_own_run_under_the_request() -> None:
    runs = rebuild_trace(
        [
            agent("1", None, "triage", 0, 20),
            chat("2", "1", 1, 2, ASK),
            agent("3", "1", "booking", 3, 10),
            chat("4", "3", 4, 5, ASK),
            chat("5", "3", 6, 7, ASK),
        ]
    )
    request = next(r for r in runs if r.parent_span_id is None)
    nested = next(r for r in runs if r.parent_span_id is not None)
    assert (request.agent_name, len(request.llm_calls)) == ("triage", 3)
    assert (nested.agent_name, len(nested.llm_calls), nested.parent_span_id) == ("booking", 2, request.span_id)
    assert request.agents[:2] == ["triage", "booking"]


def test_a_run_whose_model_calls_record_no_response_lacks_its_answer() -> None:
    """An instrumentation that writes what the model was sent and never what it answered: the run does not say it
    answered nothing, it lacks the answer and the conversation's end; one response recorded is enough to read."""
    answered = {"gen_ai__output__messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Done"}]}]'}
    for last, lacks, output in (({}, ["output", "messages"], None), (answered, [], "Done")):
        (run,) = rebuild_trace(
            [agent("1", None, "booking", 0, 10), chat("2", "1", 1, 2, ASK), chat("3", "1", 3, 4, ASK, **last)]
        )
        assert (run.lacks, run.output) == (lacks, output)


def test_a_conversation_pieced_together_from_requested_calls_alone_is_lacking() -> None:
    """Content off, an instrumentation still writes the calls the model asked for: the run shows a conversation
    of no text, which is not the conversation (nor are the results there when no call shows one: a failure's
    status is no result; nor the arguments when every call shows none; nor the answer, which no span recorded);
    with any text in it, it is."""
    call = {"type": "tool_call", "id": "c1", "name": "refund", "arguments": {}}
    asked = json.dumps([{"role": "assistant", "parts": [call]}])
    said = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Refunding."}, call]}])
    executed = tool("3", "1", "refund", 3, 4, "c1", "refunded")
    failed = span(
        "3", "1", "execute_tool refund", 3, 4, True, gen_ai__operation__name="execute_tool", gen_ai__tool__name="refund"
    )
    for output, execution, lacks in (
        (asked, executed, ["output", "messages", "tool_arguments"]),
        (asked, failed, ["output", "messages", "tool_arguments", "tool_results"]),
        (said, executed, []),
    ):
        (run,) = rebuild_trace(
            [
                agent("1", None, "desk", 0, 10, gen_ai__input__messages=json.dumps(ASK)),
                chat("2", "1", 1, 2, [], gen_ai__output__messages=output),
                execution,
            ]
        )
        assert run.lacks == lacks
