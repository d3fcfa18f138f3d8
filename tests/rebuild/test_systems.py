"""Requests from the trace's structure: a system span of an operation no dialect knows holds one request of its
agents; a request whose last acting agent failed is an error; the application's own spans separate runs of model
calls that carry no content."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import _execute, _invoke, _otlp
from tests.rebuild.test_rebuild import _chat, parts_calls, parts_user

QUESTION = "Plan a trip to Lyon and book the hotel."


def _answer(text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]


def _team(worker_fails: bool) -> Any:
    """A team span of an operation of its own invokes a planner, then a booker; nothing transfers between them."""

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            team = tracer.start_span("run_team trip_team")
            team.set_attribute("gen_ai.operation.name", "run_team")
            with trace.use_span(team, end_on_exit=True):
                planner = _invoke(tracer, "planner")
                with trace.use_span(planner, end_on_exit=True):
                    _chat(tracer, [parts_user(QUESTION)], _answer("Plan: two nights in Lyon."))
                booker = _invoke(tracer, "booker")
                with trace.use_span(booker, end_on_exit=True):
                    _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "book_hotel", {"city": "Lyon"}))])
                    with trace.use_span(_execute(tracer, "book_hotel", "c1", "booked"), end_on_exit=True):
                        pass
                    if worker_fails:
                        booker.set_status(trace.Status(trace.StatusCode.ERROR, "the hotel service is down"))
                    else:
                        _chat(tracer, [parts_user(QUESTION)], _answer("Booked two nights in Lyon."))

    return build


def _requests(build: Any) -> tuple[list[Trajectory], list[Trajectory]]:
    runs = rebuild(decode_traces(_otlp(build)).spans)
    return [r for r in runs if r.parent_span_id is None], runs


def test_a_system_span_of_an_unknown_operation_holds_one_request_of_its_agents() -> None:
    requests, runs = _requests(_team(worker_fails=False))
    assert len(requests) == 1  # not one request per agent
    request = requests[0]
    assert request.agents == ["planner", "booker"] and len(request.llm_calls) == 3
    assert [t.name for t in request.tool_calls] == ["book_hotel"]
    assert request.input == QUESTION and request.output == "Booked two nights in Lyon." and request.status == "ok"
    assert sorted(r.agent_name or "" for r in runs if r.parent_span_id == request.span_id) == ["booker", "planner"]


def test_a_request_whose_last_acting_agent_failed_is_an_error_though_its_system_span_is_unset() -> None:
    requests, _ = _requests(_team(worker_fails=True))
    assert [(r.status, r.error, r.output) for r in requests] == [("error", "the hotel service is down", None)]


def _loop_twice(tracer: Any) -> None:
    """An application's own loop, invoked twice in one trace, each under its own span; the model calls record no
    content (capture off), only model, tokens and finish reason."""
    with tracer.start_as_current_span("nightly_job"):
        for city in ("Lyon", "Nice"):
            with tracer.start_as_current_span("answer_ticket") as ticket:
                ticket.set_attribute("ticket.city", city)
                for finish in ("tool_calls", "stop"):
                    with tracer.start_as_current_span("chat gpt-4o") as s:
                        s.set_attribute("gen_ai.operation.name", "chat")
                        s.set_attribute("gen_ai.request.model", "gpt-4o")
                        s.set_attribute("gen_ai.usage.input_tokens", 10)
                        s.set_attribute("gen_ai.response.finish_reasons", json.dumps([finish]))


def test_two_invocations_of_a_loop_under_their_own_application_spans_are_two_runs() -> None:
    requests, _ = _requests(_loop_twice)
    assert [len(r.llm_calls) for r in requests] == [2, 2]
    assert len({r.span_id for r in requests}) == 2 and all(r.status == "ok" for r in requests)


def _chain(tracer: Any) -> None:
    """No system span: a front desk hands the user to billing and billing hands back, each agent's invocation
    under the application's own span, by tools named as no framework names its transfers (their results say
    who takes over)."""
    with tracer.start_as_current_span("POST /chat"):
        for agent, call_id, tool, said in (
            ("front_desk", "c1", "see_colleague", "billing takes over"),
            ("billing", "c2", "give_back", "front_desk takes over"),
        ):
            span = _invoke(tracer, agent)
            with trace.use_span(span, end_on_exit=True):
                _chat(tracer, [parts_user("Refund order 7.")], [parts_calls((call_id, tool, {}))])
                with trace.use_span(_execute(tracer, tool, call_id, said), end_on_exit=True):
                    pass
        desk = _invoke(tracer, "front_desk")
        with trace.use_span(desk, end_on_exit=True):
            _chat(tracer, [parts_user("Refund order 7.")], _answer("Billing refunded order 7."))


def test_a_chain_of_agents_linked_by_transfers_under_an_application_span_is_one_request() -> None:
    requests, runs = _requests(_chain)
    assert len(requests) == 1  # the entry agent appears twice in the chain: still one request
    request = requests[0]
    assert request.tool_calls == [] and request.output == "Billing refunded order 7."
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [
        ("front_desk", "billing"),
        ("billing", "front_desk"),
    ]
    assert len(runs) == 3 and all(r.parent_span_id is not None for r in runs if r is not request)


def _group_chat(tracer: Any) -> None:
    """Two agents take turns under the application's span; the first one's turn ends on a tool's result (no
    reflection on it), which names no agent; the second speaks next."""
    with tracer.start_as_current_span("POST /chat"):
        first = _invoke(tracer, "support")
        with trace.use_span(first, end_on_exit=True):
            _chat(tracer, [parts_user("Close my account 42.")], [parts_calls(("c1", "delete_account", {"id": 42}))])
            with trace.use_span(_execute(tracer, "delete_account", "c1", "account 42 deleted"), end_on_exit=True):
                pass
        second = _invoke(tracer, "reviewer")
        with trace.use_span(second, end_on_exit=True):
            _chat(tracer, [parts_user("Close my account 42.")], _answer("Your account is closed."))


def test_a_call_that_names_no_agent_stays_a_tool_call_whoever_speaks_next() -> None:
    requests, _ = _requests(_group_chat)
    assert len(requests) == 1 and requests[0].agents == ["support", "reviewer"]
    assert [t.name for t in requests[0].tool_calls] == ["delete_account"] and requests[0].handoffs == []


def _framework_workflow(framework_span: bool, tools_traced: bool = True) -> bytes:
    """A framework's workflow span with attributes of its own only (no convention's marks) runs a front desk that
    hands over by a call the framework intercepts, then a booker; content capture off (models, tokens and
    finish reasons only). The application's span is its own tracer's; the workflow's is the framework's, unless
    `framework_span` is False."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "desk-app"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app, framework = provider.get_tracer("desk-app"), provider.get_tracer("desk-framework")

    def chat(finish: str) -> None:
        with framework.start_as_current_span("chat gpt-4o") as s:
            s.set_attribute("gen_ai.operation.name", "chat")
            s.set_attribute("gen_ai.request.model", "gpt-4o")
            s.set_attribute("gen_ai.response.finish_reasons", (finish,))

    workflow_tracer = framework if framework_span else app
    with app.start_as_current_span("handle_request"), workflow_tracer.start_as_current_span("workflow.run") as flow:
        flow.set_attribute("workflow.name", "desk")
        for agent in ("front_desk", "booker"):
            with trace.use_span(_invoke(framework, agent), end_on_exit=True):
                chat("tool_calls")
                if agent == "booker":
                    if tools_traced:
                        with trace.use_span(_execute(framework, "book_hotel", "c1", "booked"), end_on_exit=True):
                            pass
                    chat("stop")
    provider.shutdown()
    return encode_spans(exporter.get_finished_spans()).SerializeToString()


def test_a_frameworks_workflow_span_with_no_conventions_marks_holds_one_request_of_its_agents() -> None:
    requests = [r for r in rebuild(decode_traces(_framework_workflow(True)).spans) if r.parent_span_id is None]
    assert len(requests) == 1 and requests[0].agents == ["front_desk", "booker"]
    apart = [r for r in rebuild(decode_traces(_framework_workflow(False)).spans) if r.parent_span_id is None]
    assert [r.agent_name for r in apart] == ["front_desk", "booker"]  # the application's own span joins nothing


def test_a_transfer_that_left_no_call_is_a_handoff_when_the_next_agent_acts_and_tools_are_traced() -> None:
    (request,) = [r for r in rebuild(decode_traces(_framework_workflow(True)).spans) if r.parent_span_id is None]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "booker", "agent_acted")
    ]
    assert [t.name for t in request.tool_calls] == ["book_hotel"] and "tool_calls" not in request.lacks
    untraced = rebuild(decode_traces(_framework_workflow(True, tools_traced=False)).spans)
    (request,) = [r for r in untraced if r.parent_span_id is None]
    assert request.handoffs == [] and "tool_calls" in request.lacks  # no execution anywhere: nothing to go by


def _next_speaker(carried_on: bool, answer_only: bool = False) -> Any:
    """A group chat (or a pipeline) with no span of its own: a desk answers the user, then a booker speaks, each
    agent's invocation under the application's span, no call between them. With `carried_on`, the booker's model
    is given the desk's answer (here with the user's request); else a request of its own."""
    said = "The bookings desk will help you with that."

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            with trace.use_span(_invoke(tracer, "desk"), end_on_exit=True):
                _chat(tracer, [parts_user(QUESTION)], _answer(said))
            with trace.use_span(_invoke(tracer, "booker"), end_on_exit=True):
                given = [parts_user(QUESTION), *_answer(said)] if carried_on else [parts_user("Book Nice.")]
                given = _answer(said) if answer_only else given  # a pipeline's next step: the answer alone
                _chat(tracer, given, [parts_calls(("c1", "book_hotel", {"city": "Lyon"}))])
                with trace.use_span(_execute(tracer, "book_hotel", "c1", "booked"), end_on_exit=True):
                    pass
                _chat(tracer, given, _answer("Booked two nights in Lyon."))

    return build


def test_the_next_agent_given_the_last_ones_answer_carries_on_one_request_and_its_answer_is_the_requests() -> None:
    requests, _ = _requests(_next_speaker(carried_on=True))
    assert len(requests) == 1
    request = requests[0]
    assert [t.name for t in request.tool_calls] == ["book_hotel"] and request.output == "Booked two nights in Lyon."
    assert request.handoffs == []  # the chat moved on; no agent transferred control by a call or a span
    (step,), _ = _requests(_next_speaker(carried_on=True, answer_only=True))
    assert [t.name for t in step.tool_calls] == ["book_hotel"] and step.agents == ["desk", "booker"]
    apart, _ = _requests(_next_speaker(carried_on=False))
    assert [r.agent_name for r in apart] == ["desk", "booker"]  # another conversation: another request


def _loop_of_agents(tracer: Any) -> None:
    """A workflow agent (its own invocation, no model call of its own) runs a drafter and a reviewer in turn, twice;
    the reviewer ends the loop with a tool call and no text of its own."""
    with tracer.start_as_current_span("handle_request"), trace.use_span(_invoke(tracer, "loop"), end_on_exit=True):
        for round_ in (1, 2):
            with trace.use_span(_invoke(tracer, "drafter"), end_on_exit=True):
                _chat(tracer, [parts_user(QUESTION)], _answer(f"Draft {round_}: two nights in Lyon."))
            with trace.use_span(_invoke(tracer, "reviewer"), end_on_exit=True):
                if round_ == 1:
                    _chat(tracer, [parts_user(QUESTION)], _answer("Add the dates."))
                else:
                    _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "approve", {}))])
                    with trace.use_span(_execute(tracer, "approve", "c1", "approved"), end_on_exit=True):
                        pass


def test_agents_one_agents_invocation_runs_in_a_loop_are_one_request_whose_answer_is_the_last_given() -> None:
    requests, _ = _requests(_loop_of_agents)
    assert len(requests) == 1  # not one request per turn, though each agent acts twice
    request = requests[0]
    assert len(request.llm_calls) == 4 and [t.name for t in request.tool_calls] == ["approve"]
    assert request.output == "Draft 2: two nights in Lyon."


CHOOSE = "Decide who speaks next. Answer with the next speaker's name."


def _moderated(tracer: Any) -> None:
    """A group chat led by a moderator agent: before each turn the moderator's model, given the chat so far and
    its own instruction after it, names the next speaker; the planner, then the booker speak."""
    chat = [parts_user(QUESTION)]

    def moderate(said: str) -> None:
        with trace.use_span(_invoke(tracer, "moderator"), end_on_exit=True):
            _chat(tracer, [*chat, parts_user(CHOOSE)], _answer(said))

    with tracer.start_as_current_span("handle_request"):
        team = tracer.start_span("run_team trip_team")
        team.set_attribute("gen_ai.operation.name", "run_team")
        with trace.use_span(team, end_on_exit=True):
            moderate('{"next_speaker": "planner"}')
            with trace.use_span(_invoke(tracer, "planner"), end_on_exit=True):
                _chat(tracer, [parts_user(QUESTION)], _answer("Plan: two nights in Lyon."))
            chat.extend(_answer("Plan: two nights in Lyon."))
            moderate('{"next_speaker": "booker"}')
            with trace.use_span(_invoke(tracer, "booker"), end_on_exit=True):
                _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "book_hotel", {"city": "Lyon"}))])
                with trace.use_span(_execute(tracer, "book_hotel", "c1", "booked"), end_on_exit=True):
                    pass
                _chat(tracer, [parts_user(QUESTION)], _answer("Booked two nights in Lyon."))
            chat.extend(_answer("Booked two nights in Lyon."))
            moderate('{"terminate": true}')


def test_a_moderated_group_chat_is_one_request_asked_what_the_user_asked_its_speakers_chosen_in_turn() -> None:
    requests, _ = _requests(_moderated)
    assert len(requests) == 1  # the moderator speaking again between the speakers is no second request
    request = requests[0]
    assert request.input == QUESTION  # not the moderator's own instruction, which no speaker was given
    assert [c.agent for c in request.llm_calls] == [
        "moderator",
        "planner",
        "moderator",
        "booker",
        "booker",
        "moderator",
    ]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("planner", "booker", "agent_acted")
    ]
    assert [t.name for t in request.tool_calls] == ["book_hotel"]


TEAM = "9ae1835c2fc24b45887608acf80a22fe"


def _runtime_team(published: bool) -> Any:
    """Two agents of one team on an agent runtime that traces its actors (`<runtime> process <type>_<team>.(key)-A`),
    content capture off: each turn published to the team's chat (a group chat), or sent to the next agent alone (a
    pipeline). Nothing else on the trace says the two invocations are one request."""

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("handle_request"):
            for agent in ("planner", "booker"):
                verb = (
                    f"runtime publish team_{TEAM}.(default)-T"
                    if published
                    else f"runtime send {agent}_{TEAM}.(default)-A"
                )
                with (
                    tracer.start_as_current_span(verb),
                    tracer.start_as_current_span(f"runtime process {agent}_{TEAM}.(default)-A"),
                    trace.use_span(_invoke(tracer, agent), end_on_exit=True),
                    tracer.start_as_current_span("chat gpt-4o") as chat,
                ):
                    chat.set_attribute("gen_ai.operation.name", "chat")
                    chat.set_attribute("gen_ai.request.model", "gpt-4o")

    return build


@pytest.mark.parametrize("published", [True, False])
def test_a_team_s_turns_on_an_agent_runtime_are_one_request_with_content_off(published: bool) -> None:
    requests, _ = _requests(_runtime_team(published))
    assert len(requests) == 1 and requests[0].agents == ["planner", "booker"]  # not a request per agent
    assert len(requests[0].llm_calls) == 2
    handoffs = [(h.from_agent, h.to_agent) for h in requests[0].handoffs]
    assert handoffs == ([("planner", "booker")] if published else [])  # the floor of a chat passes; a pipeline steps on


def _fan_out(tracer: Any) -> None:
    """A team span runs a planner and a booker side by side on the same request (their invocations overlap);
    what joins their answers records nothing on the trace."""
    t0 = 1_700_000_000_000_000_000
    with tracer.start_as_current_span("handle_request", start_time=t0):
        team = tracer.start_span("run_team trip_team", start_time=t0 + 1)
        team.set_attribute("gen_ai.operation.name", "run_team")
        with trace.use_span(team, end_on_exit=False):
            for i, (agent, said) in enumerate((("planner", "Plan: Lyon."), ("booker", "Booked Lyon."))):
                invocation = _invoke_at(tracer, agent, t0 + 10 + i)
                with trace.use_span(invocation, end_on_exit=False):
                    _chat(tracer, [parts_user(QUESTION)], _answer(said))
                invocation.end(end_time=t0 + 10**9 + i)
        team.end(end_time=t0 + 2 * 10**9)


def _invoke_at(tracer: Any, name: str, start: int) -> Any:
    span = tracer.start_span(f"invoke_agent {name}", start_time=start)
    span.set_attribute("gen_ai.operation.name", "invoke_agent")
    span.set_attribute("gen_ai.agent.name", name)
    return span


def test_agents_that_answered_side_by_side_leave_the_request_s_answer_lacking_not_the_last_one_s() -> None:
    requests, _ = _requests(_fan_out)
    assert len(requests) == 1 and requests[0].agents == ["planner", "booker"]
    assert requests[0].output is None and "output" in requests[0].lacks  # not "Booked Lyon." as if the last spoke


def _pipeline_of_one_kind(tracer: Any) -> None:
    """A program span runs two modules of one kind (both invocations name the same agent), the second given the
    first's answer as its request."""
    with tracer.start_as_current_span("handle_request"):
        program = tracer.start_span("program.forward")
        program.set_attribute("gen_ai.operation.name", "run_program")
        with trace.use_span(program, end_on_exit=True):
            for asked, said in ((QUESTION, "Plan: two nights in Lyon."), ("Plan: two nights in Lyon.", "Booked.")):
                with trace.use_span(_invoke(tracer, "react"), end_on_exit=True):
                    _chat(tracer, [parts_user(asked)], _answer(said))


def test_one_kind_of_agent_run_twice_the_second_given_the_first_s_answer_is_one_request() -> None:
    requests, _ = _requests(_pipeline_of_one_kind)
    assert len(requests) == 1 and len(requests[0].llm_calls) == 2  # a pipeline's step, no second request
    assert (requests[0].input, requests[0].output) == (QUESTION, "Booked.")


def _published_to_both(tracer: Any) -> None:
    """One message a runtime published to a team's topic, handled by two agents at once (a concurrent
    orchestration), their answers joined by the orchestration off the trace."""
    t0 = 1_700_000_000_000_000_000
    with tracer.start_as_current_span("handle_request", start_time=t0):
        publish = tracer.start_span(f"runtime publish {TEAM}.(concurrent)-T", start_time=t0 + 1)
        with trace.use_span(publish, end_on_exit=False):
            for i, (agent, said) in enumerate((("planner", "Plan: Lyon."), ("booker", "Booked Lyon."))):
                actor = tracer.start_span(f"runtime process {agent}_{TEAM}.(concurrent)-A", start_time=t0 + 10 + i)
                with trace.use_span(actor, end_on_exit=False):
                    invocation = _invoke_at(tracer, agent, t0 + 20 + i)
                    with trace.use_span(invocation, end_on_exit=False):
                        _chat(tracer, [parts_user(QUESTION)], _answer(said))
                    invocation.end(end_time=t0 + 10**9 + i)
                actor.end(end_time=t0 + 10**9 + 10 + i)
        publish.end(end_time=t0 + 2 * 10**9)


def test_agents_handling_one_published_message_at_once_are_one_request_lacking_the_joined_answer() -> None:
    requests, _ = _requests(_published_to_both)
    assert len(requests) == 1 and requests[0].agents == ["planner", "booker"]  # not a request per agent
    assert requests[0].handoffs == [] and requests[0].output is None and "output" in requests[0].lacks


def _routed_crews(tracer: Any) -> None:
    """An application's flow with no span of its own runs two crews, each a system span holding one agent: a triage
    crew, then the crew the flow routes to, whose task is written around the triage's answer."""
    found = "billing: the customer wants the account closed."
    with tracer.start_as_current_span("handle_request"):
        for crew, agent, asked, steps in (
            ("triage", "intake", f"Route this: {QUESTION}", [_answer(found)]),
            (
                "billing",
                "clerk",
                f"Act on ({QUESTION}); triage found: {found} Answer in one line.",
                [[parts_calls(("c1", "close_account", {"user": "u-1"}))], _answer("Account closed.")],
            ),
        ):
            span = tracer.start_span(f"{crew}.workflow")
            span.set_attribute("gen_ai.operation.name", "run_crew")
            with trace.use_span(span, end_on_exit=True), trace.use_span(_invoke(tracer, agent), end_on_exit=True):
                for said in steps:
                    _chat(tracer, [parts_user(asked)], said)
                    if said is steps[0] and len(steps) > 1:
                        with trace.use_span(_execute(tracer, "close_account", "c1", "closed"), end_on_exit=True):
                            pass


def test_a_crew_given_the_previous_crews_answer_within_its_task_carries_on_the_request() -> None:
    requests, _ = _requests(_routed_crews)
    assert len(requests) == 1  # the routed crew is no request of its own: its call is the user's request's
    request = requests[0]
    assert [t.name for t in request.tool_calls] == ["close_account"] and len(request.llm_calls) == 3
    assert QUESTION in (request.input or "") and request.output == "Account closed."
