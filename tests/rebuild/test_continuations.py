"""Model calls with no agent span: one run per chain of calls that continue one another, an agent called as a tool
(its own chain, inside its caller's pending call) joined to its caller's."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import chat
from tests.rebuild.test_handoffs import _otlp


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


LEAD = "Please close my account, user 42."
TASK = "Close the account of user 42."


def _said(*messages: dict[str, Any]) -> str:
    return json.dumps(list(messages))


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]}


def _told(call_id: str, result: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}


def _model(tracer: Any, inputs: list[dict[str, Any]], output: dict[str, Any]) -> None:
    with tracer.start_as_current_span("chat gpt-4o-mini") as s:
        s.set_attribute("gen_ai.operation.name", "chat")
        s.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        s.set_attribute("gen_ai.input.messages", _said(*inputs))
        s.set_attribute("gen_ai.output.messages", _said(output))


def _lead_asks_an_agent(task: str, answer: str, told: str) -> Any:
    """A lead whose tool `consult` runs another agent, which no span marks: the trace holds the lead's call asking
    for `consult`, the other agent's two calls (it was asked `task`, deleted an account, answered `answer`), and
    the lead's next call, told `told` for `consult`."""

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            _model(tracer, [user(LEAD)], _call("c1", "consult", {"question": TASK}))
            _model(tracer, [user(task)], _call("c2", "delete_account", {"user_id": "42"}))
            _model(tracer, [user(task), _told("c2", "account 42 deleted")], assistant(answer))
            _model(tracer, [user(LEAD), _told("c1", told)], assistant("Your account 42 has been closed."))

    return build


def _runs(build: Any) -> list[Trajectory]:
    return [r for r in rebuild(decode_traces(_otlp(build)).spans) if r.parent_span_id is None]


def test_an_agent_called_as_a_tool_with_no_span_of_its_own_is_that_tools_work() -> None:
    """Its conversation runs while the lead's `consult` is pending, asked what the call's arguments say: one
    request, whose calls include the inner agent's delete."""
    (run,) = _runs(_lead_asks_an_agent(TASK, "Account 42 is deleted.", "Account 42 is deleted."))
    assert [t.name for t in run.tool_calls] == ["consult", "delete_account"] and len(run.llm_calls) == 4
    assert (run.input, run.output) == (LEAD, "Your account 42 has been closed.")
    assert run.tool_calls[0].result == "Account 42 is deleted."


def test_an_inner_conversation_answering_what_the_tool_returned_is_its_work() -> None:
    """Asked in other words than the arguments, but its answer is what the lead was told the call returned."""
    (run,) = _runs(_lead_asks_an_agent("Remove user 42.", "Done: 42 removed.", "Done: 42 removed."))
    assert [t.name for t in run.tool_calls] == ["consult", "delete_account"]


def test_a_conversation_neither_asked_nor_answering_the_pending_call_stays_apart() -> None:
    runs = _runs(_lead_asks_an_agent("Remove user 42.", "Done: 42 removed.", "Closed."))
    assert [(r.input, [t.name for t in r.tool_calls], len(r.llm_calls)) for r in runs] == [
        (LEAD, ["consult"], 2),
        ("Remove user 42.", ["delete_account"], 2),
    ]
