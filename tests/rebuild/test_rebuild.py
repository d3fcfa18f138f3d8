"""Rebuild behaviour beyond the captures: frameworks that speak a known convention, ordering,
nested runs, log events, and spans that are broken in the ways real exports are."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.spans import STATUS_ERROR, Event, LogEvent, ReceivedSpan, Span
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

TRACE = "0af7651916cd43dd8448eb211c80319c"
MS = 1_000_000


def span(
    span_id: str,
    parent: str | None,
    name: str,
    attrs: dict[str, Any] | None = None,
    start: int = 0,
    end: int | None = None,
    events: list[Event] | None = None,
    status: int = 0,
    message: str = "",
) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=span_id.rjust(16, "0"),
        parent_id=parent.rjust(16, "0") if parent else None,
        name=name,
        kind=1,
        start_ns=1_700_000_000_000 * MS + start * MS,
        end_ns=1_700_000_000_000 * MS + (end if end is not None else start + 1) * MS,
        status_code=status,
        status_message=message,
        attributes=attrs or {},
        events=events or [],
        resource={"service.name": "svc"},
    )


def parts_user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def parts_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls],
    }


# --- frameworks that speak a covered convention --------------------------------------------


def test_langgraph_via_openinference_without_agent_span_is_one_run_at_the_trace_root() -> None:
    llm1 = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Rome?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city": "Rome"}',
        "llm.token_count.prompt": 11,
        "llm.token_count.completion": 5,
    }
    llm2 = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Rome?",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "t1",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.content": "sunny",
        "llm.input_messages.2.message.tool_call_id": "t1",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "It is sunny in Rome.",
    }
    spans = [
        span("1", None, "LangGraph", {"openinference.span.kind": "CHAIN"}, 0, 50),
        span("2", "1", "agent", {"openinference.span.kind": "CHAIN"}, 1, 10),
        span("3", "2", "ChatOpenAI", llm1, 2, 9),
        span("4", "1", "tools", {"openinference.span.kind": "CHAIN"}, 11, 20),
        span(
            "5",
            "4",
            "get_weather",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_weather",
                "input.value": '{"city": "Rome"}',
                "output.value": "sunny",
            },
            12,
            19,
        ),
        span("6", "1", "agent", {"openinference.span.kind": "CHAIN"}, 21, 40),
        span("7", "6", "ChatOpenAI", llm2, 22, 39),
    ]
    [run] = rebuild(spans)
    assert run.span_id == "1".rjust(16, "0") and run.source == "openinference"
    assert run.input == "Weather in Rome?" and run.output == "It is sunny in Rome."
    assert [(t.name, t.arguments, t.result, t.step) for t in run.tool_calls] == [
        ("get_weather", {"city": "Rome"}, "sunny", 1)
    ]
    assert run.steps == 2 and run.llm_calls[0].input_tokens == 11
    assert [m["role"] for m in run.messages] == ["user", "assistant", "tool", "assistant"]


def _sdk_spans(build: Any) -> list[ReceivedSpan]:
    """Spans made by the real OpenTelemetry SDK, encoded to OTLP and decoded as the server does."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "graph-app"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("langgraph-like"))
    provider.shutdown()
    body = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return decode_traces(body).spans


def _chat(tracer: Any, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> None:
    with tracer.start_as_current_span("chat gpt-4o") as s:
        s.set_attribute("gen_ai.operation.name", "chat")
        s.set_attribute("gen_ai.request.model", "gpt-4o")
        s.set_attribute("gen_ai.usage.input_tokens", 10)
        s.set_attribute("gen_ai.usage.output_tokens", 3)
        s.set_attribute("gen_ai.input.messages", json.dumps(inputs))
        s.set_attribute("gen_ai.output.messages", json.dumps(outputs))


def test_supervisor_with_sub_agent_in_genai_conventions_is_one_request_with_a_nested_run() -> None:
    question = "Find the population of Lyon."

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("invoke_agent supervisor") as sup:
            sup.set_attribute("gen_ai.operation.name", "invoke_agent")
            sup.set_attribute("gen_ai.agent.name", "supervisor")
            sup.set_attribute("otelgrade.ground_truth", '{"answer": "522000"}')
            _chat(tracer, [parts_user(question)], [parts_calls(("c1", "transfer_to_researcher", {}))])
            with tracer.start_as_current_span("execute_tool transfer_to_researcher") as t:
                t.set_attribute("gen_ai.operation.name", "execute_tool")
                t.set_attribute("gen_ai.tool.call.id", "c1")
                with tracer.start_as_current_span("invoke_agent researcher") as sub:
                    sub.set_attribute("gen_ai.operation.name", "invoke_agent")
                    sub.set_attribute("gen_ai.agent.name", "researcher")
                    _chat(tracer, [parts_user(question)], [parts_calls(("r1", "search", {"q": "Lyon population"}))])
                    with tracer.start_as_current_span("execute_tool search") as st:
                        st.set_attribute("gen_ai.operation.name", "execute_tool")
                        st.set_attribute("gen_ai.tool.call.id", "r1")
                        st.set_attribute("gen_ai.tool.call.result", "522000")
                    _chat(
                        tracer,
                        [parts_user(question)],
                        [{"role": "assistant", "parts": [{"type": "text", "content": "About 522000."}]}],
                    )
                t.set_attribute("gen_ai.tool.call.result", "About 522000.")
            _chat(
                tracer,
                [parts_user(question)],
                [{"role": "assistant", "parts": [{"type": "text", "content": "Lyon has about 522000 inhabitants."}]}],
            )

    runs = rebuild(_sdk_spans(build))
    assert [r.agent_name for r in runs] == ["supervisor", "researcher"]
    request, researcher = runs  # the supervisor's invocation is the request; the researcher's own run is nested
    assert researcher.parent_span_id == request.span_id and request.parent_span_id is None
    assert [(t.name, t.result, t.agent) for t in request.tool_calls] == [("search", "522000", "researcher")]
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("supervisor", "researcher")]
    assert [c.agent for c in request.llm_calls] == ["supervisor", "researcher", "researcher", "supervisor"]
    assert request.agents == ["supervisor", "researcher"] and request.own_run
    assert [(t.name, t.arguments, t.result) for t in researcher.tool_calls] == [
        ("search", {"q": "Lyon population"}, "522000")
    ]
    assert len(researcher.llm_calls) == 2
    assert request.output == "Lyon has about 522000 inhabitants." and researcher.output == "About 522000."


def test_crewai_via_openllmetry_workflow_agent_task_tool() -> None:
    def flat_chat(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, m in enumerate(messages):
            for k, v in m.items():
                if k == "tool_calls":
                    for j, call in enumerate(v):
                        for ck, cv in call.items():
                            out[f"gen_ai.{prefix}.{i}.tool_calls.{j}.{ck}"] = cv
                else:
                    out[f"gen_ai.{prefix}.{i}.{k}"] = v
        return out

    ask = {"role": "user", "content": "Summarise AI news"}
    call = {"id": "x1", "name": "search", "arguments": '{"query": "AI news"}'}
    chat1 = {
        "llm.request.type": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.prompt_tokens": 9,
        **flat_chat("prompt", [ask]),
        **flat_chat("completion", [{"role": "assistant", "tool_calls": [call]}]),
    }
    chat2 = {
        "llm.request.type": "chat",
        **flat_chat("prompt", [ask]),
        **flat_chat("completion", [{"role": "assistant", "content": "Three stories.", "finish_reason": "stop"}]),
    }
    spans = [
        span("a", None, "crew.workflow", {"traceloop.span.kind": "workflow", "traceloop.entity.name": "crew"}, 0, 90),
        span(
            "b", "a", "Researcher.agent", {"traceloop.span.kind": "agent", "traceloop.entity.name": "Researcher"}, 1, 80
        ),
        span("c", "b", "research.task", {"traceloop.span.kind": "task"}, 2, 79),
        span("d", "c", "openai.chat", chat1, 3, 10),
        span(
            "e",
            "c",
            "search.tool",
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "search",
                "traceloop.entity.input": '{"args": [], "kwargs": {"query": "AI news"}}',
                "traceloop.entity.output": '"3 results"',
            },
            11,
            20,
        ),
        span("f", "c", "openai.chat", chat2, 21, 30),
    ]
    [run] = rebuild(spans)
    assert run.agent_name == "Researcher" and run.source == "traceloop"
    assert run.input == "Summarise AI news" and run.output == "Three stories."
    assert [(t.name, t.call_id, t.arguments, t.result, t.span_id) for t in run.tool_calls] == [
        ("search", "x1", {"query": "AI news"}, "3 results", "e".rjust(16, "0"))
    ]
    assert run.llm_calls[1].finish_reason == "stop"


# --- ordering ------------------------------------------------------------------------------


def test_tool_calls_follow_the_responses_not_the_clock() -> None:
    """Whole-millisecond clocks: every span starts at the same instant, tools finish in reverse."""
    first = [parts_user("go")]
    out1 = [parts_calls(("a", "alpha", {}), ("b", "beta", {}))]
    second = [
        *first,
        *out1,
        {
            "role": "tool",
            "parts": [
                {"type": "tool_call_response", "id": "a", "response": "A"},
                {"type": "tool_call_response", "id": "b", "response": "B"},
            ],
        },
    ]
    out2 = [parts_calls(("c", "gamma", {"n": 1}))]
    third = [*second, *out2]
    chat = {"gen_ai.operation.name": "chat"}
    spans = [
        span("1", None, "invoke_agent", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "x"}, 0, 0),
        span("9", "1", "execute_tool gamma", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c"}, 0),
        span("8", "1", "execute_tool beta", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "b"}, 0),
        span("7", "1", "execute_tool alpha", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "a"}, 0),
        span(
            "6",
            "1",
            "chat",
            {
                **chat,
                "gen_ai.input.messages": json.dumps(third),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
                ),
            },
            0,
        ),
        span(
            "5",
            "1",
            "chat",
            {**chat, "gen_ai.input.messages": json.dumps(second), "gen_ai.output.messages": json.dumps(out2)},
            0,
        ),
        span(
            "4",
            "1",
            "chat",
            {**chat, "gen_ai.input.messages": json.dumps(first), "gen_ai.output.messages": json.dumps(out1)},
            0,
        ),
    ]
    [run] = rebuild(spans)
    assert [(t.name, t.step) for t in run.tool_calls] == [("alpha", 1), ("beta", 1), ("gamma", 2)]
    assert [(c.span_id or "")[-1:] for c in run.llm_calls] == ["4", "5", "6"]
    assert run.output == "done"


def test_tool_spans_without_message_content_are_placed_by_time() -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    tool = {"gen_ai.operation.name": "execute_tool"}
    spans = [
        span("1", None, "invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}, 0, 100),
        span("2", "1", "chat m", chat, 1, 10),
        span("3", "1", "execute_tool lookup", tool, 11, 12),
        span("4", "1", "chat m", chat, 13, 20),
        span("5", "1", "execute_tool fetch", {**tool, "gen_ai.tool.name": "fetch"}, 21, 22, status=STATUS_ERROR),
        span("6", "1", "chat m", chat, 23, 30),
    ]
    [run] = rebuild(spans)
    assert run.agent_name == "a"
    assert [(t.name, t.step, t.error) for t in run.tool_calls] == [("lookup", 1, False), ("fetch", 2, True)]


# --- log events are span events --------------------------------------------------------------


def test_messages_as_log_records_equal_messages_as_span_events() -> None:
    def events() -> list[Event]:
        return [
            Event("gen_ai.user.message", 5 * MS, {}, {"content": "hi"}),
            Event(
                "gen_ai.choice",
                6 * MS,
                {},
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hello"}},
            ),
        ]

    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "greeter"}
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    with_events = [span("1", None, "invoke_agent", agent, 0, 10), span("2", "1", "chat", chat, 1, 9, events())]
    bare = [span("1", None, "invoke_agent", agent, 0, 10), span("2", "1", "chat", chat, 1, 9)]
    logs = [LogEvent(TRACE, "2".rjust(16, "0"), e) for e in events()]
    [a] = rebuild(with_events)
    [b] = rebuild(bare, logs)
    [c] = rebuild(bare, list(reversed(logs)))
    assert a.output == "hello" and a.input == "hi" and a.llm_calls[0].finish_reason == "stop"
    assert a.model_dump() == b.model_dump() == c.model_dump()
    assert bare[1].events == []  # the input spans are left as they were


# --- status ----------------------------------------------------------------------------------


def test_run_error_comes_from_the_run_span() -> None:
    boom = Event("exception", 3 * MS, {"exception.type": "RuntimeError", "exception.message": "db down"})
    spans = [
        span("1", None, "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 0, 10, [boom], STATUS_ERROR),
    ]
    [run] = rebuild(spans)
    assert (run.status, run.error) == ("error", "RuntimeError: db down")


# --- broken input ----------------------------------------------------------------------------


def test_broken_trees_and_values_never_raise() -> None:
    garbage = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": "not json",
        "gen_ai.output.messages": [1, 2, {"parts": "x"}, {"role": "assistant", "parts": [None, {"type": "tool_call"}]}],
        "gen_ai.usage.input_tokens": "many",
        "gen_ai.response.finish_reasons": 7,
    }
    spans = [
        span("1", "2", "", {"gen_ai.operation.name": "invoke_agent"}, 0),  # 1 <-> 2 is a cycle
        span("2", "1", "", garbage, 1),
        span("2", None, "duplicate", {}, 2),
        span("3", "ffff", "orphan", {"openinference.span.kind": "TOOL", "input.value": "{bad"}, 3),
        span("4", "4", "self-parent", {"ai.operationId": "ai.toolCall", "ai.toolCall.args": None}, 4),
        span("5", "3", "execute_tool", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": 12}, 5),
        span("6", "5", "x", {"traceloop.span.kind": "tool", "traceloop.entity.input": "[]"}, 6),
        span("7", "6", "events", {"gen_ai.operation.name": "chat", "events": '[{"event.name": 3}]'}, 7),
    ]
    started = time.monotonic()
    runs = rebuild(spans, [LogEvent(TRACE, "9".rjust(16, "0"), Event("gen_ai.choice", 0, {}, "x"))])
    assert time.monotonic() - started < 1
    assert runs and all(r.trace_id == TRACE for r in runs)
    assert rebuild([]) == []


def test_unknown_spans_leave_the_run_intact() -> None:
    spans = [
        span("1", None, "handle_request", {"http.route": "/chat"}, 0, 100),
        span("2", "1", "invoke_agent bot", {"gen_ai.operation.name": "invoke_agent"}, 1, 90),
        span("3", "2", "SELECT users", {"db.system": "postgresql"}, 2, 3),
        span(
            "4",
            "2",
            "chat m",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
                ),
            },
            4,
            5,
        ),
    ]
    [run] = rebuild(spans)
    assert run.agent_name == "bot" and run.output == "ok" and len(run.llm_calls) == 1
    assert run.span_id.endswith("2")


def test_structured_messages_on_an_inference_details_log_record() -> None:
    """util-genai's `gen_ai.client.inference.operation.details` record carries messages as AnyValue lists."""
    details = Event(
        "gen_ai.client.inference.operation.details",
        2 * MS,
        {
            "gen_ai.input.messages": [parts_user("Capital of Peru?")],
            "gen_ai.output.messages": [
                {"role": "assistant", "parts": [{"type": "text", "content": "Lima."}], "finish_reason": "stop"}
            ],
        },
    )
    spans = [
        span("1", None, "invoke_agent geo", {"gen_ai.operation.name": "invoke_agent"}, 0, 10),
        span("2", "1", "chat m", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 4}, 1, 9),
    ]
    [run] = rebuild(spans, [LogEvent(TRACE, "2".rjust(16, "0"), details)])
    assert (run.input, run.output, run.llm_calls[0].finish_reason) == ("Capital of Peru?", "Lima.", "stop")
    assert run.messages == [{"role": "user", "content": "Capital of Peru?"}, {"role": "assistant", "content": "Lima."}]


def test_inference_details_split_over_several_events_are_read_together() -> None:
    """Strands on the latest GenAI conventions writes one details event per attribute: the request's messages in
    one, the answer in the next."""
    asked = Event(
        "gen_ai.client.inference.operation.details", 2 * MS, {"gen_ai.input.messages": [parts_user("Capital?")]}
    )
    said = Event(
        "gen_ai.client.inference.operation.details",
        3 * MS,
        {"gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "Lima."}]}]},
    )
    spans = [
        span("1", None, "invoke_agent geo", {"gen_ai.operation.name": "invoke_agent"}, 0, 10),
        span("2", "1", "chat m", {"gen_ai.operation.name": "chat"}, 1, 9),
    ]
    [run] = rebuild(spans, [LogEvent(TRACE, "2".rjust(16, "0"), e) for e in (asked, said)])
    assert (run.input, run.output) == ("Capital?", "Lima.") and "messages" not in run.lacks


def test_an_empty_agent_span_is_a_placeholder_but_one_that_says_something_is_a_run() -> None:
    """LangGraph's Traceloop instrumentation writes an empty `invoke_agent` beside the real work; an agent span
    whose content is on the span itself (its request and answer, or its model calls recorded as events) is not."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
    placeholder = [span("1", None, "handle_request"), span("2", "1", "invoke_agent helper", agent)]
    (root,) = rebuild(placeholder)  # the trace root, lacking what the agent did: no grader passes it on nothing
    assert root.span_id == "1".rjust(16, "0") and {"tool_calls", "llm_calls", "output"} <= set(root.lacks)
    messages = {"gen_ai.input.messages": json.dumps([parts_user("hi")])}
    talking = [span("1", None, "handle_request"), span("2", "1", "invoke_agent helper", agent | messages)]
    (run,) = rebuild(talking)
    assert (run.agent_name, run.input) == ("helper", "hi")


@pytest.mark.parametrize("recorded", [True, False])
def test_a_tool_that_delivers_the_agent_s_answer_is_its_answer_not_a_tool_call(recorded: bool) -> None:
    """Whatever its name: the one call of the last model response whose argument is the answer the agent
    returned delivered that answer (an output tool), and is not one of the agent's actions. Where the agent
    recorded no answer, nothing shows what the call did: it stays a tool call."""
    answer = "Paris: 12C and rain."

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("invoke_agent travel_agent") as agent:
            agent.set_attribute("gen_ai.operation.name", "invoke_agent")
            agent.set_attribute("gen_ai.agent.name", "travel_agent")
            agent.set_attribute("gen_ai.input.messages", json.dumps([parts_user("Weather in Paris?")]))
            if recorded:
                said = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                agent.set_attribute("gen_ai.output.messages", json.dumps(said))
            _chat(tracer, [parts_user("Weather in Paris?")], [parts_calls(("c1", "get_weather", {"city": "Paris"}))])
            with tracer.start_as_current_span("execute_tool get_weather") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "get_weather")
                tool.set_attribute("gen_ai.tool.call.id", "c1")
                tool.set_attribute("gen_ai.tool.call.result", "12C rain")
            _chat(tracer, [parts_user("Weather in Paris?")], [parts_calls(("c2", "submit_answer", {"answer": answer}))])

    (run,) = rebuild(_sdk_spans(build))
    if recorded:
        assert [c.name for c in run.tool_calls] == ["get_weather"] and run.output == answer
    else:
        assert [c.name for c in run.tool_calls] == ["get_weather", "submit_answer"]


def test_integers_beyond_64_bits_in_message_json_stay_exact() -> None:
    """A JSON parser that reads integers as 64-bit would round an account number; the rebuild keeps it exact,
    whether the digits come plain, after other text, or beside non-ASCII text."""
    big = 123456789012345678901234567890
    args = {"account": big, "note": "héllo ✓", "small": 7, "negative": -9223372036854775809}
    spans = [
        span("1", None, "invoke_agent bank", {"gen_ai.operation.name": "invoke_agent"}, 0, 10),
        span(
            "2",
            "1",
            "execute_tool transfer",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "transfer",
                "gen_ai.tool.call.arguments": json.dumps(args, ensure_ascii=False),
            },
            1,
            2,
        ),
    ]
    (run,) = rebuild(spans)
    assert run.tool_calls[0].arguments == args
