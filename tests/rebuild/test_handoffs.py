"""Handoffs and delegations are found by what the trace shows, under names no framework uses, and `inspect` says
what decided each one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.paths import FIXTURES
from tests.rebuild.test_rebuild import _chat, parts_calls, parts_user

QUESTION = "Refund order 7 to my card."
DONE = [{"role": "assistant", "parts": [{"type": "text", "content": "Refunded."}]}]


def _otlp(build: Any) -> bytes:
    """The trace as the real OpenTelemetry SDK exports it (OTLP protobuf)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "desk-app"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("desk-app"))
    provider.shutdown()
    body: bytes = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return body


def _invoke(tracer: Any, name: str) -> Any:
    span = tracer.start_span(f"invoke_agent {name}")
    span.set_attribute("gen_ai.operation.name", "invoke_agent")
    span.set_attribute("gen_ai.agent.name", name)
    return span


def _execute(tracer: Any, name: str, call_id: str, result: str) -> Any:
    span = tracer.start_span(f"execute_tool {name}")
    span.set_attribute("gen_ai.operation.name", "execute_tool")
    span.set_attribute("gen_ai.tool.name", name)
    span.set_attribute("gen_ai.tool.call.id", call_id)
    span.set_attribute("gen_ai.tool.call.result", result)
    return span


def _handover_by_another_word(tracer: Any, sign_off: bool = False) -> None:
    """A front desk passes the user to `billing` with a tool named as no framework names its transfers; the
    billing agent then acts, its invocation beside the front desk's under the application's own span. With
    `sign_off`, as a swarm's agent does, the desk's model first says so in a last answer of its own, under the
    swarm's span."""
    from opentelemetry import trace

    system = {"gen_ai.operation.name": "invoke_team"} if sign_off else {}
    with tracer.start_as_current_span("POST /chat", attributes=system):
        desk = _invoke(tracer, "front_desk")
        with trace.use_span(desk, end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "pass_along", {"desk": "billing"}))])
            with trace.use_span(_execute(tracer, "pass_along", "c1", "passed"), end_on_exit=True):
                pass
            if sign_off:
                over = [{"role": "assistant", "parts": [{"type": "text", "content": "Over to billing."}]}]
                _chat(tracer, [parts_user(QUESTION)], over)
        billing = _invoke(tracer, "billing")
        with trace.use_span(billing, end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c2", "refund", {"order": 7}))])
            with trace.use_span(_execute(tracer, "refund", "c2", "refunded"), end_on_exit=True):
                pass
            _chat(tracer, [parts_user(QUESTION)], DONE)


def _oi(tracer: Any, name: str, kind: str, node: str | None = None, hands_to: str = "", **attributes: Any) -> Any:
    """An OpenInference span; `node` the graph node it runs and `hands_to` the agent a handoff tool hands to, as
    LangGraph records them in the span's metadata."""
    span = tracer.start_span(name)
    span.set_attribute("openinference.span.kind", kind)
    if node is not None:
        said = {"langgraph_node": node} | ({"__handoff_destination": hands_to} if hands_to else {})
        span.set_attribute("metadata", json.dumps(said))
    for key, value in attributes.items():
        span.set_attribute(key.replace("__", "."), value)
    return span


def _graph_of_agents(
    tracer: Any, handover: str = "pass_to_billing", hands_to: str = "", hands_back: bool = False
) -> None:
    """A graph whose nodes are its agents (a swarm), each node a ReAct graph of its own (`agent` and `tools`
    nodes, the first of which the instrumentation marks AGENT): no span names an agent but by its node. The
    front desk hands the user to billing with a tool whose name ends with billing's; billing acts. With
    `hands_back`, as a supervisor's worker does, the graph then returns to the front desk, which answers."""
    from opentelemetry import trace

    def step(agent: str, asked: dict[str, Any], tool: tuple[str, str] | None) -> None:
        with trace.use_span(_oi(tracer, "agent", "AGENT", "agent"), end_on_exit=True):
            calls = asked.get("tool_calls") or []
            flat = {
                f"llm__output_messages__0__message__tool_calls__{i}__tool_call__function__name": c
                for i, c in enumerate(calls)
            }
            content = {} if calls else {"llm__output_messages__0__message__content": asked["text"]}
            llm = _oi(
                tracer,
                "ChatOpenAI",
                "LLM",
                "agent",
                llm__model_name="gpt-4o",
                llm__input_messages__0__message__role="user",
                llm__input_messages__0__message__content=QUESTION,
                llm__output_messages__0__message__role="assistant",
                **flat,
                **content,
            )
            llm.end()
        if tool is not None:
            with trace.use_span(_oi(tracer, "tools", "CHAIN", "tools"), end_on_exit=True):
                said = hands_to if tool[0] == handover else ""
                _oi(tracer, tool[0], "TOOL", "tools", said, tool__name=tool[0], output__value=tool[1]).end()

    with trace.use_span(_oi(tracer, "desk_graph", "CHAIN", input__value=QUESTION), end_on_exit=True):
        with trace.use_span(_oi(tracer, "front_desk", "CHAIN", "front_desk"), end_on_exit=True):
            step("front_desk", {"tool_calls": [handover]}, (handover, "passed"))
        with trace.use_span(_oi(tracer, "billing", "CHAIN", "billing"), end_on_exit=True):
            step("billing", {"tool_calls": ["refund"]}, ("refund", "refunded"))
            step("billing", {"text": "Refunded."}, None)
        if hands_back:
            with trace.use_span(_oi(tracer, "front_desk", "CHAIN", "front_desk"), end_on_exit=True):
                step("front_desk", {"text": "Billing refunded your order."}, None)


def _delegation_by_another_word(tracer: Any) -> None:
    """A team leader hands the work to a member with a tool of its own words whose argument says whom; the
    member's invocation runs inside that call, and the leader answers after it."""
    from opentelemetry import trace

    lead = _invoke(tracer, "lead")
    with trace.use_span(lead, end_on_exit=True):
        _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "hand_work", {"member_id": "booker"}))])
        with trace.use_span(_execute(tracer, "hand_work", "c1", "Refunded."), end_on_exit=True):
            member = _invoke(tracer, "booker")
            with trace.use_span(member, end_on_exit=True):
                _chat(tracer, [parts_user("Refund order 7.")], [parts_calls(("c2", "refund", {"order": 7}))])
                with trace.use_span(_execute(tracer, "refund", "c2", "refunded"), end_on_exit=True):
                    pass
                _chat(tracer, [parts_user("Refund order 7.")], DONE)
        _chat(tracer, [parts_user(QUESTION)], DONE)


def test_a_transfer_under_words_no_framework_uses_is_a_handoff_when_the_agent_it_names_acts() -> None:
    runs = rebuild(decode_traces(_otlp(_handover_by_another_word)).spans)
    requests = [r for r in runs if r.parent_span_id is None]
    assert len(requests) == 1  # one request of two agents, not one per agent
    request = requests[0]
    assert [t.name for t in request.tool_calls] == ["refund"]  # the transfer is no tool call of the request
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "agent_acted")
    ]
    billing = next(r for r in runs if r.agent_name == "billing")
    assert billing.parent_span_id == request.span_id and billing.input == QUESTION


def test_a_handoff_stands_when_the_giver_signs_off_before_the_agent_it_names_acts() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _handover_by_another_word(t, sign_off=True))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [c.agent for c in request.llm_calls] == ["front_desk", "front_desk", "billing", "billing"]
    assert [t.name for t in request.tool_calls] == ["refund"]  # within a budget of one tool call
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "agent_acted")
    ]  # and billing did not hand back to the desk, which never spoke after it


def test_the_agents_of_a_graph_whose_nodes_are_agents_are_its_nodes_and_their_handoffs_no_tool_calls() -> None:
    runs = rebuild(decode_traces(_otlp(_graph_of_agents)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.agent_name == "desk_graph" and request.input == QUESTION
    assert [c.agent for c in request.llm_calls] == ["front_desk", "billing", "billing"]
    assert [t.name for t in request.tool_calls] == ["refund"]  # within a budget of one tool call
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "agent_acted")
    ]
    assert request.output == "Refunded."


def test_a_graph_node_agent_that_acts_again_after_its_worker_took_control_back_with_no_call() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _graph_of_agents(t, hands_back=True))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [c.agent for c in request.llm_calls] == ["front_desk", "billing", "billing", "front_desk"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "agent_acted"),
        ("billing", "front_desk", "agent_acted"),
    ]  # the worker's automatic hand-back to its supervisor


def test_a_handoff_tool_whose_span_says_whom_it_hands_to_is_a_handoff_whatever_its_name() -> None:
    graph = lambda tracer: _graph_of_agents(tracer, handover="pass_along", hands_to="billing")  # noqa: E731
    request = next(r for r in rebuild(decode_traces(_otlp(graph)).spans) if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == ["refund"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "dialect")
    ]


def test_a_delegation_whose_member_runs_inside_the_call_is_a_handoff_not_a_tool_call() -> None:
    runs = rebuild(decode_traces(_otlp(_delegation_by_another_word)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert request.agent_name == "lead" and len(request.llm_calls) == 4
    assert [t.name for t in request.tool_calls] == ["refund"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("lead", "booker", "nested_invocation")
    ]


def test_inspect_says_what_decided_each_handoff(tmp_path: Path) -> None:
    trace = tmp_path / "trace.pb"
    trace.write_bytes(_otlp(_handover_by_another_word))
    shown = subprocess.run(
        [sys.executable, "-m", "otelgrade", "inspect", str(trace)], capture_output=True, text=True, timeout=60
    ).stdout
    assert "handoff at step 1: front_desk -> billing (decided by: the agent it hands to acted" in shown
    agno = FIXTURES / "frameworks" / "agno" / "handoff"
    shown = subprocess.run(
        [sys.executable, "-m", "otelgrade", "inspect", str(agno)], capture_output=True, text=True, timeout=60
    ).stdout
    assert "handoff at step 1: travel_team -> booking_agent (decided by:" in shown


def _handoff_span(tracer: Any, states_target: bool) -> None:
    """An agent workflow whose front desk hands the user to billing, the model's response that asked for it not
    recorded: only a handoff span says so. With `states_target` it names both agents (the OTel contrib
    openai-agents instrumentation's `agent_handoff` span); without, only the giver (OpenLLMetry's, whose target is
    unknown when the span starts)."""
    from opentelemetry import trace

    workflow = tracer.start_span("Agent workflow")
    workflow.set_attribute("gen_ai.operation.name", "invoke_agent")
    with trace.use_span(workflow, end_on_exit=True):
        with trace.use_span(_invoke(tracer, "front_desk"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [])
            handoff = tracer.start_span("handoff")
            if states_target:
                handoff.set_attribute("gen_ai.operation.name", "agent_handoff")
                handoff.set_attribute("gen_ai.handoff.to_agent", "billing")
            else:
                handoff.set_attribute("gen_ai.operation.name", "handoff")
                handoff.set_attribute("traceloop.span.kind", "handoff")
            handoff.set_attribute("gen_ai.handoff.from_agent", "front_desk")
            handoff.end()
        with trace.use_span(_invoke(tracer, "billing"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c2", "refund", {"order": 7}))])
            with trace.use_span(_execute(tracer, "refund", "c2", "refunded"), end_on_exit=True):
                pass
            _chat(tracer, [parts_user(QUESTION)], DONE)


def test_a_handoff_span_is_a_handoff_when_no_call_of_the_request_carries_it() -> None:
    for states_target in (True, False):
        runs = rebuild(decode_traces(_otlp(lambda t: _handoff_span(t, states_target))).spans)  # noqa: B023
        request = next(r for r in runs if r.parent_span_id is None)
        assert [c.agent for c in request.llm_calls] == ["front_desk", "billing", "billing"]
        assert [t.name for t in request.tool_calls] == ["refund"]
        assert [(h.from_agent, h.to_agent, h.step, h.decided_by) for h in request.handoffs] == [
            ("front_desk", "billing", 1, "dialect")
        ]
        assert request.lacks == []  # the span is understood: nothing it might hold is missing
        assert request.output == "Refunded."


def _handover_described(tracer: Any) -> None:
    """The front desk's transfer tool takes no argument and its result is not recorded (content off): only the
    tool's description, on its execution span, names the agent that acts right after it."""
    from opentelemetry import trace

    with tracer.start_as_current_span("POST /chat"):
        with trace.use_span(_invoke(tracer, "front_desk"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "pass_along", {}))])
            execution = tracer.start_span("execute_tool pass_along")
            execution.set_attribute("gen_ai.operation.name", "execute_tool")
            execution.set_attribute("gen_ai.tool.name", "pass_along")
            execution.set_attribute("gen_ai.tool.call.id", "c1")
            execution.set_attribute("gen_ai.tool.description", "Ask agent 'billing' for help")
            execution.end()
        with trace.use_span(_invoke(tracer, "billing"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c2", "refund", {"order": 7}))])
            with trace.use_span(_execute(tracer, "refund", "c2", "refunded"), end_on_exit=True):
                pass
            _chat(tracer, [parts_user(QUESTION)], DONE)


def test_a_transfer_whose_tool_description_names_the_agent_that_acts_next_is_a_handoff() -> None:
    request = next(r for r in rebuild(decode_traces(_otlp(_handover_described)).spans) if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == ["refund"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "agent_acted")
    ]


def _intercepted_handover(tracer: Any, traced: bool = True, void: bool = False) -> None:
    """Under a team span, a front desk's model asks for `zq_hop` (a word naming nobody, with no argument either),
    which the framework answers itself: no execution span, or with `void` one that returned `None`. The billing
    agent acts next; its own tool call is executed, and so traced, unless `traced` is False."""
    from opentelemetry import trace

    with tracer.start_as_current_span("run_team desk", attributes={"gen_ai.operation.name": "invoke_team"}):
        with trace.use_span(_invoke(tracer, "front_desk"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "zq_hop", {}))])
            if void:
                with trace.use_span(_execute(tracer, "zq_hop", "c1", "None"), end_on_exit=True):
                    pass
        with trace.use_span(_invoke(tracer, "billing"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c2", "refund", {"order": 7}))])
            if traced:
                with trace.use_span(_execute(tracer, "refund", "c2", "refunded"), end_on_exit=True):
                    pass
            _chat(tracer, [parts_user(QUESTION)], DONE)


@pytest.mark.parametrize("void", [False, True], ids=["no execution", "execution returned None"])
def test_a_call_the_framework_answered_in_place_of_a_tool_is_a_handoff_when_another_agent_acts_next(
    void: bool,
) -> None:
    spans = decode_traces(_otlp(lambda t: _intercepted_handover(t, void=void))).spans
    request = next(r for r in rebuild(spans) if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == ["refund"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in request.handoffs] == [
        ("front_desk", "billing", "agent_acted")
    ]
    untraced = rebuild(decode_traces(_otlp(lambda t: _intercepted_handover(t, traced=False))).spans)
    request = next(r for r in untraced if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == ["zq_hop", "refund"]  # no execution anywhere: no evidence


def _instructions_switch(tracer: Any, result: str) -> None:
    """No span names an agent: under the application's span, the model speaks with a desk's instructions, calls
    `pass_on` naming `billing`, and then speaks with other instructions (as a workflow that switches the agent
    its model speaks as). `result` is what `pass_on` returned."""
    from opentelemetry import trace

    def system(text: str) -> dict[str, Any]:
        return {"role": "system", "parts": [{"type": "text", "content": text}]}

    desk, billing = system("You route guests."), system("You refund orders.")
    with tracer.start_as_current_span("POST /chat"):
        args = {"desk": "billing", "why": "a refund"}
        _chat(tracer, [desk, parts_user(QUESTION)], [parts_calls(("c1", "pass_on", args))])
        with trace.use_span(_execute(tracer, "pass_on", "c1", result), end_on_exit=True):
            pass
        _chat(tracer, [billing, parts_user(QUESTION)], [parts_calls(("c2", "refund", {"order": 7}))])
        with trace.use_span(_execute(tracer, "refund", "c2", "refunded"), end_on_exit=True):
            pass
        _chat(tracer, [billing, parts_user(QUESTION)], DONE)


def test_unnamed_agents_hand_over_where_the_instructions_change_after_a_call_whose_result_names_the_next() -> None:
    (run,) = rebuild(decode_traces(_otlp(lambda t: _instructions_switch(t, "billing takes it from here"))).spans)
    assert [t.name for t in run.tool_calls] == ["refund"]
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in run.handoffs] == [(None, "billing", "agent_acted")]
    assert [c.agent for c in run.llm_calls] == [None, "billing", "billing"]
    # the same switch after a call whose result names nobody (a memory edit): a tool call
    (run,) = rebuild(decode_traces(_otlp(lambda t: _instructions_switch(t, "saved"))).spans)
    assert [t.name for t in run.tool_calls] == ["pass_on", "refund"] and run.handoffs == []


def _ends_by_a_void_call(result: str) -> Any:
    """A run that looks something up, then hands its answer to `wrap_up` (one argument, a sentence), whose
    execution returns `result`; no model call after it."""

    def build(tracer: Any) -> None:
        from opentelemetry import trace

        with trace.use_span(_invoke(tracer, "desk"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "lookup", {"order": 7}))])
            with trace.use_span(_execute(tracer, "lookup", "c1", "order 7: paid"), end_on_exit=True):
                pass
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c2", "wrap_up", {"note": "Order 7 is refunded."}))])
            with trace.use_span(_execute(tracer, "wrap_up", "c2", result), end_on_exit=True):
                pass

    return build


def test_a_last_call_that_returned_nothing_and_ended_the_loop_delivers_the_answer() -> None:
    (run,) = rebuild(decode_traces(_otlp(_ends_by_a_void_call("None"))).spans)
    assert [t.name for t in run.tool_calls] == ["lookup"] and run.output == "Order 7 is refunded."
    (run,) = rebuild(decode_traces(_otlp(_ends_by_a_void_call("note sent"))).spans)  # it did something
    assert [t.name for t in run.tool_calls] == ["lookup", "wrap_up"] and run.output is None


def test_a_team_lead_hands_back_to_its_supervisor_once_its_own_workers_handed_back_to_it() -> None:
    """Nested supervisors: the front desk transfers to a team lead, which transfers to its worker; the worker
    hands back to the lead with no call, the lead answers, and the front desk speaks again: the lead handed back
    too, though its worker spoke between (a team's calls are the lead's turn)."""
    from otelgrade.core.trajectory import Handoff, LLMCall, Trajectory
    from otelgrade.rebuild.requests import _returns

    agents = ["front_desk", "team_lead", "worker", "worker", "team_lead", "front_desk"]
    request = Trajectory.model_construct(llm_calls=[LLMCall(step=i + 1, agent=a) for i, a in enumerate(agents)])
    transfers = [
        Handoff(from_agent="front_desk", to_agent="team_lead", step=1),
        Handoff(from_agent="team_lead", to_agent="worker", step=2),
    ]
    returns = [(h.from_agent, h.to_agent, h.step) for h in _returns(transfers, transfers, request)]
    assert sorted(returns) == [("team_lead", "front_desk", 6), ("worker", "team_lead", 5)]


def _broadcast(inside: bool) -> Any:
    """A team lead asks every member at once with one call that names none of them; both members act, inside the
    call's execution (`inside`) or, the execution span closing as the call is made (a generator's), right after
    it in the lead's run; the lead then answers."""
    from opentelemetry import trace

    def members(tracer: Any) -> None:
        for member, tool in (("meter_reader", "read_meter"), ("billing_clerk", "waive_fee")):
            with trace.use_span(_invoke(tracer, member), end_on_exit=True):
                _chat(tracer, [parts_user("Check the account.")], [parts_calls(("c_" + tool, tool, {}))])
                with trace.use_span(_execute(tracer, tool, "c_" + tool, "done"), end_on_exit=True):
                    pass
                _chat(tracer, [parts_user("Check the account.")], DONE)

    def build(tracer: Any) -> None:
        with trace.use_span(_invoke(tracer, "lead"), end_on_exit=True):
            _chat(tracer, [parts_user(QUESTION)], [parts_calls(("c1", "ask_everyone", {"task": "Check the account."}))])
            with trace.use_span(_execute(tracer, "ask_everyone", "c1", "both answered"), end_on_exit=True):
                if inside:
                    members(tracer)
            if not inside:
                members(tracer)
            _chat(tracer, [parts_user(QUESTION)], DONE)

    return build


@pytest.mark.parametrize("inside", [True, False])
def test_one_call_after_which_several_members_act_is_a_delegation_to_each_no_tool_call(inside: bool) -> None:
    runs = rebuild(decode_traces(_otlp(_broadcast(inside))).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [t.name for t in request.tool_calls] == ["read_meter", "waive_fee"]  # the broadcast is no tool call
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [
        ("lead", "meter_reader"),
        ("lead", "billing_clerk"),
    ]


def _one_span_for_two_agents(tracer: Any) -> None:
    """A workflow traced as one agent span whose model speaks as one agent, then, after a call naming another
    whose result says it took over, with that agent's instructions (no span per agent)."""
    from opentelemetry import trace

    def system(text: str) -> dict[str, Any]:
        return {"role": "system", "parts": [{"type": "text", "content": text}]}

    with trace.use_span(_invoke(tracer, "workflow"), end_on_exit=True):
        desk = [system("You are the tariff desk."), parts_user(QUESTION)]
        _chat(tracer, desk, [parts_calls(("c1", "pass_on", {"to_agent": "billing_desk"}))])
        took = "Agent billing_desk is now handling the request."
        with trace.use_span(_execute(tracer, "pass_on", "c1", took), end_on_exit=True):
            pass
        billing = [system("You are the billing desk."), parts_user(QUESTION)]
        _chat(tracer, billing, [parts_calls(("c2", "delete_account", {"user": "e-1"}))])
        with trace.use_span(_execute(tracer, "delete_account", "c2", "deleted"), end_on_exit=True):
            pass
        _chat(tracer, billing, DONE)


def test_a_single_agent_span_whose_model_takes_another_agent_s_instructions_after_a_transfer_hands_off() -> None:
    (run,) = rebuild(decode_traces(_otlp(_one_span_for_two_agents)).spans)
    assert [t.name for t in run.tool_calls] == ["delete_account"]  # the transfer is no tool call
    assert [h.to_agent for h in run.handoffs] == ["billing_desk"]


def _code_agent(tracer: Any) -> None:
    """A code agent: its model answers with code (no tool call), and that code runs a managed agent, whose
    invocation sits under the code agent's step with no tool span; the managed agent's model asks for a tool."""
    from opentelemetry import trace

    with trace.use_span(_invoke(tracer, "librarian"), end_on_exit=True):
        with tracer.start_as_current_span("Step 1"):
            _chat(
                tracer,
                [parts_user(QUESTION)],
                [{"role": "assistant", "parts": [{"type": "text", "content": "clerk(task='renew')"}]}],
            )
            with trace.use_span(_invoke(tracer, "clerk"), end_on_exit=True):
                _chat(tracer, [parts_user("renew")], [parts_calls(("c1", "renew_card", {"card": "L-1"}))])
                with trace.use_span(_execute(tracer, "renew_card", "c1", "renewed"), end_on_exit=True):
                    pass
                _chat(tracer, [parts_user("renew")], DONE)
        with tracer.start_as_current_span("Step 2"):
            _chat(tracer, [parts_user(QUESTION)], DONE)


def test_an_agent_a_code_agent_runs_from_its_code_is_a_call_of_the_request_under_the_agent_s_name() -> None:
    runs = rebuild(decode_traces(_otlp(_code_agent)).spans)
    request = next(r for r in runs if r.parent_span_id is None)
    assert [(t.name, t.agent) for t in request.tool_calls] == [("clerk", "librarian"), ("renew_card", "clerk")]
    assert "tool_calls" not in request.lacks  # each agent's calls agree with what its own model asked
