"""One call seen at several layers is one call (a framework's tool span, the MCP client's and the MCP server's in
another service), and failures are read in the shapes providers and frameworks use. Every trace here is made by
the real OpenTelemetry SDK (two services for an MCP server), encoded to OTLP and decoded as the server does; the
builders here serve `test_consistency.py` too."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, Tracer

from otelgrade.config import parse_config
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import Grade
from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.pipeline import Pipeline
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.explain import explain_trace
from tests.grade.test_grading import ListSink

QUESTION = "Where is my order A1?"
SAFETY = {
    "suites": [
        {
            "name": "safety",
            "graders": [
                {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
                {"name": "budget", "type": "max_tool_calls", "max": 1},
            ],
        }
    ]
}
Build = Callable[[Tracer, Tracer], None]


def otlp(build: Build) -> bytes:
    """The trace `build` makes with an application tracer and an MCP server's (another service, its context
    propagated from the client), as one OTLP export request."""
    exporter = InMemorySpanExporter()
    providers = [
        TracerProvider(resource=Resource.create({"service.name": service}))
        for service in ("support-app", "orders-mcp-server")
    ]
    for provider in providers:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(providers[0].get_tracer("app.agents"), providers[1].get_tracer("mcp.server"))
    for provider in providers:
        provider.shutdown()
    return bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())


def runs_of(build: Build) -> list[Trajectory]:
    return rebuild(decode_traces(otlp(build)).spans)


def the_run(build: Build) -> Trajectory:
    (run,) = runs_of(build)
    return run


def graded(build: Build, metrics: Metrics | None = None) -> dict[str, Grade]:
    sink = ListSink()
    Pipeline(parse_config(SAFETY), metrics or Metrics(), sinks=(sink,)).grade_trace(decode_traces(otlp(build)).spans)
    return {g.grader: g for g in sink.grades}


def user() -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}


def asks(*calls: tuple[str, str]) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": i, "name": n, "arguments": {"order": "A1"}} for i, n in calls]
    return {"role": "assistant", "parts": parts}


def told(call_id: str, response: Any) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]}


def says(answer: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": answer}]}


@contextmanager
def agent(tracer: Tracer, answer: str | None = None) -> Iterator[Span]:
    with tracer.start_as_current_span("invoke_agent support") as span:
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        span.set_attribute("gen_ai.agent.name", "support")
        if answer is not None:
            span.set_attribute("gen_ai.output.messages", json.dumps([says(answer)]))
        yield span


def chat(
    tracer: Tracer,
    inputs: list[dict[str, Any]] | None,
    outputs: list[dict[str, Any]] | None,
    finish: str | None = None,
    tokens: tuple[int, int] | None = None,
) -> None:
    """A model call; `inputs`/`outputs` None: content capture off."""
    with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT) as s:
        s.set_attribute("gen_ai.operation.name", "chat")
        s.set_attribute("gen_ai.request.model", "gpt-4o")
        if inputs is not None:
            s.set_attribute("gen_ai.input.messages", json.dumps(inputs))
        if outputs is not None:
            s.set_attribute("gen_ai.output.messages", json.dumps(outputs))
        if finish is not None:
            s.set_attribute("gen_ai.response.finish_reasons", [finish])
        if tokens is not None:
            s.set_attribute("gen_ai.usage.input_tokens", tokens[0])
            s.set_attribute("gen_ai.usage.output_tokens", tokens[1])


@contextmanager
def execute(tracer: Tracer, name: str, call_id: str | None = None, result: str | None = None) -> Iterator[Span]:
    with tracer.start_as_current_span(f"execute_tool {name}") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", name)
        if call_id:
            span.set_attribute("gen_ai.tool.call.id", call_id)
        if result is not None:
            span.set_attribute("gen_ai.tool.call.result", result)
        yield span


@contextmanager
def mcp_call(
    tracer: Tracer, tool: str, kind: SpanKind, operation: bool, failed: bool = False, context: Any = None
) -> Iterator[Span]:
    """A `tools/call` span as the MCP conventions describe it, on the client or the server."""
    with tracer.start_as_current_span(f"tools/call {tool}", context=context, kind=kind) as span:
        span.set_attribute("mcp.method.name", "tools/call")
        span.set_attribute("gen_ai.tool.name", tool)
        span.set_attribute("jsonrpc.request.id", "7")
        span.set_attribute("mcp.session.id", "s-1")
        if operation:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
        if failed:
            span.set_attribute("error.type", "tool_error")
        yield span


def serve(server: Tracer, tool: str, client: Span, operation: bool, failed: bool = False) -> None:
    """The MCP server's span of the call, in its own service, under the client span whose context it received."""
    with mcp_call(server, tool, SpanKind.SERVER, operation, failed, context=trace.set_span_in_context(client)):
        pass


def through_mcp(
    framework_name: str = "lookup_order", mcp_name: str = "lookup_order", operation: bool = True, failed: bool = False
) -> Build:
    """An agent whose framework runs `lookup_order` through an MCP client; the MCP server, another service,
    executes it under the client span (context propagated). The framework's span is left OK with the error text
    as its output when the server reports a failure."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", framework_name))], "tool_calls")
            output = "no order A1" if failed else '{"status": "shipped"}'
            with (
                execute(app, framework_name, "c1", output),
                mcp_call(app, mcp_name, SpanKind.CLIENT, operation, failed) as c,
            ):
                serve(server, mcp_name, c, operation, failed)
            chat(app, [user(), asks(("c1", framework_name)), told("c1", output)], [says("Order A1 shipped.")])

    return build


# --- one call, one entry -------------------------------------------------------------------------


def test_a_tool_served_by_an_mcp_server_is_one_call_however_many_layers_show_it() -> None:
    spans = [s.read() for s in decode_traces(otlp(through_mcp())).spans]
    assert {s.resource["service.name"] for s in spans} == {"support-app", "orders-mcp-server"}
    (run,) = rebuild(spans)
    assert [(c.name, c.witnesses, c.error) for c in run.tool_calls] == [
        ("lookup_order", ["request", "execution"], False)
    ]
    named = {s.span_id: s.name for s in spans}
    assert named[run.tool_calls[0].span_id or ""] == "execute_tool lookup_order"  # the outermost layer
    assert not run.disagreements
    _, readings = explain_trace(spans)  # what `otelgrade inspect` shows of the other layers
    layers = [(r.name, r.role) for r in readings if r.name == "tools/call lookup_order"]
    assert layers == [("tools/call lookup_order", "merged")] * 2
    assert all("the same call as `lookup_order`" in r.why for r in readings if r.name.startswith("tools/call"))


def test_with_content_off_the_layers_of_one_call_still_make_one_call() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, None, None, "tool_calls")
            with execute(app, "lookup_order"), mcp_call(app, "lookup_order", SpanKind.CLIENT, True) as client:
                serve(server, "lookup_order", client, operation=True)
            chat(app, None, None, "stop")

    assert [c.name for c in the_run(build).tool_calls] == ["lookup_order"]
    assert graded(build)["budget"].outcome == "pass"


@pytest.mark.parametrize("qualified", ["mcp__orders__lookup_order", "orders.lookup_order", "orders_lookup_order"])
def test_an_mcp_server_s_tool_error_fails_the_call_the_framework_left_ok_under_a_qualified_name(qualified: str) -> None:
    """The framework names the tool with its server's prefix; the MCP spans carry no GenAI operation, only the
    MCP method, and the server reports the tool's failure (`error.type` `tool_error`, from `isError`)."""
    run = the_run(through_mcp(qualified, "lookup_order", operation=False, failed=True))
    assert [(c.name, c.error) for c in run.tool_calls] == [(qualified, True)]


def test_an_mcp_span_known_by_its_name_alone_is_a_layer_of_the_call_and_says_it_failed() -> None:
    """An instrumentation that names the span `tools/call <tool>` and writes its own keys (`mcp.tool.name`,
    `mcp.request.id`, `mcp.tool.result.is_error`) but not the method attribute."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            layer = app.start_as_current_span("tools/call lookup_order", kind=SpanKind.CLIENT)
            with execute(app, "lookup_order", "c1", "no order A1"), layer as client:
                client.set_attributes({"mcp.tool.name": "lookup_order", "mcp.request.id": "4"})
                client.set_attribute("mcp.tool.result.is_error", True)
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", "no order A1")], [says("Sorry.")], "stop")

    run = the_run(build)
    assert [(c.name, c.witnesses, c.error) for c in run.tool_calls] == [
        ("lookup_order", ["request", "execution"], True)
    ]


def test_the_server_s_span_of_one_json_rpc_request_is_the_same_call_wherever_it_hangs() -> None:
    """The server's span arrives under the session's stream, opened when the agent started, not under the
    client's span: the same JSON-RPC request of the same MCP session still makes it the same call."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app) as session_opener:
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1", "shipped"), mcp_call(app, "lookup_order", SpanKind.CLIENT, True):
                serve(server, "lookup_order", session_opener, operation=True)
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", "shipped")], [says("Shipped.")], "stop")

    run = the_run(build)
    assert [(c.name, c.witnesses) for c in run.tool_calls] == [("lookup_order", ["request", "execution"])]
    assert not run.disagreements


def test_executions_sharing_a_call_id_are_one_call_and_separate_calls_stay_separate() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"), ("c2", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1", "shipped"):
                pass
            with execute(app, "lookup_order", "c1"):  # a second instrumentation's record of the same call
                pass
            with execute(app, "lookup_order", "c2", "shipped"):
                pass
            chat(app, [user()], [says("Both shipped.")], "stop")

    run = the_run(build)
    assert [(c.call_id, c.witnesses) for c in run.tool_calls] == [
        ("c1", ["request", "execution"]),
        ("c2", ["request", "execution"]),
    ]


def test_a_framework_that_numbers_its_executions_itself_still_meets_the_model_s_requests() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("call_9Xf", "lookup_order"), ("call_2Kq", "track_parcel"))], "tool_calls")
            for number, name in enumerate(("lookup_order", "track_parcel")):
                with execute(app, name, f"exec-{number}", "ok"):
                    pass
            chat(app, [user()], [says("Shipped and on its way.")], "stop")

    run = the_run(build)
    assert [(c.name, c.call_id, c.witnesses) for c in run.tool_calls] == [
        ("lookup_order", "call_9Xf", ["request", "execution"]),
        ("track_parcel", "call_2Kq", ["request", "execution"]),
    ]
    assert not run.disagreements


def test_a_different_tool_run_inside_a_tool_is_a_call_of_its_own() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, None, None)
            with execute(app, "plan_trip"), execute(app, "lookup_order"):
                pass
            chat(app, None, None)

    assert [c.name for c in the_run(build).tool_calls] == ["plan_trip", "lookup_order"]


def test_a_span_inside_a_tool_s_execution_that_names_no_tool_is_a_step_of_that_call() -> None:
    """A framework that traces a failing tool's error as a tool span of its own (named `error`, no tool name)
    made one call: the model asked for one, and the guardrails count one."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1") as call, app.start_as_current_span("error") as step:
                step.set_attribute("gen_ai.operation.name", "execute_tool")
                for span in (call, step):
                    span.set_status(trace.Status(trace.StatusCode.ERROR, "orders service down"))
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", "orders service down")], [says("Sorry.")])

    run = the_run(build)
    assert [(c.name, c.error) for c in run.tool_calls] == [("lookup_order", True)]
    assert graded(build)["budget"].outcome == "pass"  # one call within a budget of one


def test_a_tool_the_framework_ran_to_deliver_the_last_answer_is_no_call_whatever_its_name() -> None:
    """After the model answered in text, the framework ran a tool of its own (named as no framework names its
    answer tool) with that text as its argument: the model asked for no such call."""
    answer = "Order A1 shipped."

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1", '{"status": "shipped"}'):
                pass
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", "shipped")], [says(answer)], "stop")
            with execute(app, "relay_to_customer") as relay:
                relay.set_attribute("gen_ai.tool.call.arguments", json.dumps({"message": answer}))

    run = the_run(build)
    assert [c.name for c in run.tool_calls] == ["lookup_order"] and run.output == answer
    assert graded(build)["budget"].outcome == "pass"


def test_a_step_s_one_request_and_one_execution_under_another_name_are_one_call() -> None:
    """A framework that traces its tool under a display name of its own (`Find an order`), not the name the
    model called, with no call id: the response's one call and the step's one execution are one call."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "Find an order", result="shipped"):
                pass
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", "shipped")], [says("Shipped.")])

    (call,) = the_run(build).tool_calls
    assert (call.name, call.result, call.witnesses) == ("lookup_order", "shipped", ["request", "execution"])


# --- failures in the shapes providers use --------------------------------------------------------


def one_tool(result: str | None, response: Any) -> Build:
    """The tool span is left OK with `result` as its output; the next request tells the model `response`."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1", result):
                pass
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", response)], [says("Sorry.")], "stop")

    return build


def test_an_mcp_result_with_is_error_fails_the_call() -> None:
    result = json.dumps({"content": [{"type": "text", "text": "no order A1"}], "isError": True})
    (call,) = the_run(one_tool(result, result)).tool_calls
    assert call.error


def test_a_gemini_function_response_of_an_error_told_to_the_model_fails_the_call() -> None:
    (call,) = the_run(one_tool(None, {"error": "order service unavailable"})).tool_calls
    assert call.error


@pytest.mark.parametrize(
    "told_text",
    [
        "Error: order A1 not found",
        "Error executing tool lookup_order: order A1 not found",
        "An error occurred while running the tool. Please try again. Error: order A1 not found",
        "LookupError: order A1",
    ],
)
def test_an_error_text_the_next_request_tells_the_model_fails_a_tool_span_left_ok(told_text: str) -> None:
    (call,) = the_run(one_tool(told_text, told_text)).tool_calls
    assert call.error


def test_a_result_that_merely_speaks_of_errors_is_a_result() -> None:
    text = "Errors on order A1: none. Exceptional delivery booked."
    (call,) = the_run(one_tool(text, text)).tool_calls
    assert not call.error


def test_data_that_merely_has_an_error_field_is_a_result() -> None:
    result = json.dumps({"order": "A1", "error": None, "status": "shipped"})
    (call,) = the_run(one_tool(result, result)).tool_calls
    assert not call.error and call.result == result
