"""A team's manager with model calls of its own (a group chat's selector, an orchestrator): AutoGen's runtime records
them as `LLMCall` records on the manager actor's span, outside every agent's invocation. They are the request's
calls, the speakers are one request, and the user's task and the manager's closing answer are its input and
output."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from otelgrade.core.spans import Event, Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.rebuild import rebuild
from tests.rebuild.genai_spans import agent, chat, span

TEAM = "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
TASK = "Close my account, customer c-7."


def _llm_call(second: int, asked: str, answer: str, tool: str | None = None, heard: tuple[str, ...] = ()) -> Event:
    message: dict[str, Any] = {"role": "assistant", "content": None if tool else answer}
    if tool:
        message["tool_calls"] = [
            {"id": f"call-{second}", "type": "function", "function": {"name": tool, "arguments": "{}"}}
        ]
    record = {
        "type": "LLMCall",
        "messages": [*({"role": "user", "content": h} for h in heard), {"role": "user", "content": asked}],
        "response": {
            "object": "chat.completion",
            "model": "gpt-4o",
            "choices": [{"message": message, "finish_reason": "tool_calls" if tool else "stop"}],
        },
        "prompt_tokens": 10,
        "completion_tokens": 5,
    }
    return Event("autogen.event", second * 10**9 + 1, {}, json.dumps(record))


def _with(base: Span, *events: Event) -> Span:
    return dataclasses.replace(base, events=list(events))


def _actor(span_id: str, parent: str, kind: str, start: int, end: int, *events: Event, **attrs: Any) -> Span:
    name = f"autogen process {kind}_{TEAM}.({TEAM})-A"
    return _with(span(span_id, parent, name, start, end, messaging__operation="process", **attrs), *events)


def _speaker(span_id: str, parent: str, name: str, start: int, end: int, *events: Event, error: bool = False) -> Span:
    base = span(
        span_id,
        parent,
        f"invoke_agent {name}",
        start,
        end,
        error,
        gen_ai__operation__name="invoke_agent",
        gen_ai__system="autogen",
        gen_ai__agent__name=name,
        gen_ai__agent__id=f"{name}_{TEAM}/{TEAM}",
    )
    return _with(base, *events)


def _orchestrated(accounts_fail: bool = False) -> list[Span]:
    """An orchestrator plans (two calls), gives the turn to `metering`, then to `accounts`, which deletes the
    account (or whose model fails: no record), and answers the user itself."""
    sent = json.dumps({"messages": [{"source": "user", "content": TASK, "type": "TextMessage"}]})
    spans = [
        span("1", None, "handle_request", 0, 20),
        _actor(
            "2",
            "1",
            "Orchestrator",
            1,
            2,
            _llm_call(1, f"Plan: {TASK}", "a plan"),
            _llm_call(1, "ledger", "{}"),
            message=sent,
        ),
        _actor("3", "1", "metering", 3, 6),
        _speaker("4", "3", "metering", 3, 6, _llm_call(4, "Read the meter.", "It reads 40.")),
        _actor("5", "1", "Orchestrator", 7, 8, _llm_call(7, "ledger", '{"next_speaker": "accounts"}')),
        _actor("6", "1", "accounts", 9, 12),
    ]
    if accounts_fail:
        spans.append(_speaker("7", "6", "accounts", 9, 12, error=True))
        return spans
    spans += [
        _speaker(
            "7",
            "6",
            "accounts",
            9,
            12,
            _llm_call(9, "Close c-7.", "", tool="close", heard=("It reads 40.",)),  # the chat so far
            _llm_call(11, "close: done", "Closed.", heard=("It reads 40.", "Close c-7.")),
        ),
        span(
            "8", "7", "execute_tool close", 10, 11, gen_ai__operation__name="execute_tool", gen_ai__tool__name="close"
        ),
        _actor("9", "1", "Orchestrator", 13, 14, _llm_call(13, f"Answer: {TASK}", "Your account c-7 is closed.")),
    ]
    return spans


def _request(spans: list[Span]) -> Trajectory:
    (request,) = [r for r in rebuild(spans) if r.parent_span_id is None]
    return request


def test_a_manager_s_own_model_calls_are_the_request_s_calls_in_order() -> None:
    request = _request(_orchestrated())
    assert [c.agent for c in request.llm_calls] == [
        "Orchestrator",
        "Orchestrator",
        "metering",
        "Orchestrator",
        "accounts",
        "accounts",
        "Orchestrator",
    ]
    assert [t.name for t in request.tool_calls] == ["close"]
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("metering", "accounts")]


def test_the_request_is_the_task_the_team_was_sent_and_the_manager_s_closing_answer() -> None:
    request = _request(_orchestrated())
    assert request.input == TASK
    assert request.output == "Your account c-7 is closed."


def test_a_speaker_that_failed_after_the_manager_s_last_call_fails_the_request_with_its_call_lacking() -> None:
    request = _request(_orchestrated(accounts_fail=True))
    assert request.status == "error"
    assert request.output is None
    assert "llm_calls" in request.lacks
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("metering", "accounts")]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def _said(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def _consulted(span_id: str, parent: str, start: int, asked: str, answer: str) -> list[Span]:
    """One invocation of the workflow's manager agent: one model call, given the task and its own prompt."""
    return [
        agent(span_id, parent, "conductor", start, start + 1),
        chat(
            f"{span_id}1",
            span_id,
            start,
            start + 1,
            [_user(TASK), _user(asked)],
            gen_ai__output__messages=_said(answer),
        ),
    ]


def _workflow() -> list[Span]:
    """A workflow (its run span from the framework's tracer) whose orchestrating step consults its manager agent
    twice (facts, plan), hands the task to `clerk`'s step, then consults it twice again (a ledger, the answer)."""
    return [
        span("1", None, "handle_request", 0, 30),
        span("2", "1", "workflow.run", 1, 29, workflow__name="Magentic"),
        span("3", "2", "executor.process orchestrator", 2, 7, executor__id="orchestrator"),
        *_consulted("4", "3", 2, "Facts?", "Facts: none."),
        *_consulted("5", "3", 4, "Plan?", "Plan: ask the clerk."),
        span("6", "2", "executor.process clerk", 8, 15, executor__id="clerk"),
        agent("7", "6", "clerk", 8, 15),
        chat("71", "7", 8, 9, [_user("Close c-7.")], gen_ai__output__messages=_said("Closed c-7.")),
        span("8", "2", "executor.process orchestrator", 16, 28, executor__id="orchestrator"),
        *_consulted("9", "8", 16, "Ledger?", '{"done": true}'),
        *_consulted("a", "8", 20, "Answer?", "Your account c-7 is closed."),
    ]


def test_an_agent_a_workflow_consults_within_its_own_steps_is_its_manager_not_a_request_of_its_own() -> None:
    found = rebuild(_workflow())
    (request,) = [r for r in found if r.parent_span_id is None]
    assert [c.agent for c in request.llm_calls] == ["conductor", "conductor", "clerk", "conductor", "conductor"]
    assert request.span_id == "2".rjust(16, "0")  # the workflow's run is the request
    assert request.agent_name == "clerk"  # the first speaker the manager chose
    assert request.input == TASK
    assert request.output == "Your account c-7 is closed."
    assert sorted(r.agent_name or "" for r in found if r.parent_span_id == request.span_id).count("conductor") == 4


RUNTIME_TEAM = "fb91a9c5c39c451bb03702f647ba1ad4"  # a team id written without dashes


def _runtime(span_id: str, parent: str, op: str, target: str, start: int, end: int) -> Span:
    """A span of the runtime's messaging: an actor (`-A`) processing a message, or a publish to the team (`-T`)."""
    return span(span_id, parent, f"agent_runtime {op} {target}_{RUNTIME_TEAM}.(default)-A", start, end)


def _manager_call(span_id: str, parent: str, start: int, asked: str, answer: str) -> Span:
    return chat(span_id, parent, start, start + 1, [_user(asked)], gen_ai__output__messages=_said(answer))


def _manager_on_runtime() -> list[Span]:
    """A team on a runtime whose manager's actor calls the model itself, outside every agent's invocation (facts,
    plan; then a ledger and the answer), between which its speaker's actor runs `clerk`'s invocation, which is
    given only the manager's instruction (no user message)."""
    instruction = {"role": "assistant", "parts": [{"type": "text", "content": "Close c-7."}]}
    return [
        span("1", None, "handle_request", 0, 30),
        _runtime("2", "1", "process", "OrchestrationManager", 1, 6),
        _manager_call("21", "2", 1, f"Here is the request:\n\n{TASK}\n\nWhat facts are given?", "Facts: none."),
        _manager_call("22", "2", 3, f"Plan for: {TASK}", "Plan: ask the clerk."),
        span("3", "1", f"agent_runtime publish {RUNTIME_TEAM}.(default)-T", 7, 16),
        _runtime("4", "3", "process", "clerk", 7, 16),
        agent("5", "4", "clerk", 8, 15),
        chat("51", "5", 8, 9, [instruction], gen_ai__output__messages=_said("Closed c-7.")),
        span("6", "1", f"agent_runtime publish {RUNTIME_TEAM}.(default)-T", 17, 28),
        _runtime("7", "6", "process", "OrchestrationManager", 17, 28),
        _manager_call("71", "7", 17, "Ledger?", '{"done": true}'),
        _manager_call("72", "7", 20, "Answer?", "Your account c-7 is closed."),
    ]


def test_model_calls_in_a_team_actor_outside_every_invocation_are_its_manager_s_calls_of_the_request() -> None:
    """Semantic Kernel's orchestrations run on autogen-core's runtime: the manager's calls are spans of their own,
    under its actor, in no agent's run. They are the request's calls, and its closing answer the request's."""
    (request,) = [r for r in rebuild(_manager_on_runtime()) if r.parent_span_id is None]
    assert [c.agent for c in request.llm_calls] == ["OrchestrationManager", "OrchestrationManager", "clerk"] + [
        "OrchestrationManager"
    ] * 2
    assert request.agent_name == "clerk"
    assert TASK in (request.input or "")  # the request as the manager was given it, in its prompt
    assert request.output == "Your account c-7 is closed."
    assert "llm_calls" not in request.lacks and "input" not in request.lacks
