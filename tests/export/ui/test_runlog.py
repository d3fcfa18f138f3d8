"""What a user reads on a live `serve`'s stderr about failing runs: one line per failing run with every failing grade,
its judge's included when the judge answers after the code graders; a judge later than `judge.timeout` gives the
run's line without it, then a line of its own marked late. The webhook sink gets the same grouping."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import replace

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from otelgrade.core.results import Grade
from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.gathering import Gathering, GradedRun
from tests.conftest import ServeProcess
from tests.fake_openai import FakeOpenAI, Reply
from tests.webhook_receiver import Receiver

Serve = Callable[..., ServeProcess]


def booking_run(endpoint: str, n: int) -> str:
    """A booking agent run sent by the OTel SDK over OTLP/gRPC, with its request and answer; odd ones call
    delete_account (so `safe` fails them). Returns its trace id."""
    provider = TracerProvider(resource=Resource({"service.name": "booking-agent"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True), schedule_delay_millis=20)
    )
    tracer = provider.get_tracer("booking.agent")
    tool = "delete_account" if n % 2 else "find_table"
    request = [{"role": "user", "parts": [{"type": "text", "content": f"Book table {n} for two"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": f"Done ({tool})."}]}]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    steps = [
        ("chat gpt-4o-mini", {**chat, "gen_ai.input.messages": json.dumps(request)}),
        (f"execute_tool {tool}", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}),
        ("chat gpt-4o-mini", {**chat, "gen_ai.output.messages": json.dumps(answer)}),
    ]
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "booker"}
    with tracer.start_as_current_span("invoke_agent booker", attributes=agent) as root:
        for name, attributes in steps:  # children of the agent span, one after the other
            tracer.start_span(name, attributes=attributes).end()
    provider.force_flush()
    provider.shutdown()
    return f"{root.get_span_context().trace_id:032x}"


SAFE = {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}
HELPFUL = {"name": "helpful", "type": "rubric", "prompt": "Did the agent do what the user asked?"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-run-lines")
    with FakeOpenAI(default=Reply.grade(0.1, "the table was not booked", delay=0.5)) as server:
        yield server


def run_lines(server: ServeProcess) -> dict[str, list[str]]:
    """The `run failed` lines of the server's stderr, by trace id."""
    lines: dict[str, list[str]] = {}
    for line in server.log().splitlines():
        if found := re.search(r"otelgrade\.runs: (run failed.*trace_id=([0-9a-f]{32}).*)", line):
            lines.setdefault(found.group(2), []).append(found.group(1))
    return lines


def test_a_judge_answering_after_the_code_graders_is_on_the_runs_one_line(serve: Serve, fake: FakeOpenAI) -> None:
    with Receiver() as receiver:
        suite = {"name": "booking", "match": {"service.name": "booking-agent"}, "graders": [SAFE, HELPFUL]}
        server = serve(
            {
                "judge": {"base_url": fake.base_url},
                "suites": [suite],
                "sinks": [{"type": "webhook", "url": receiver.url, "max_per_second": 100}],
            }
        )
        traces = [booking_run(server.grpc_address, n) for n in range(4)]
        server.wait_for_metric("otelgrade_grades_total", {"grader": "helpful", "outcome": "fail"}, 4)
        receiver.wait_for(4)
        assert server.stop() == 0

    lines = run_lines(server)
    assert sorted(lines) == sorted(traces)
    for n, trace_id in enumerate(traces):
        [line] = lines[trace_id]  # one line per failing run
        graders = re.findall(r"grader=(\w+):", line)
        assert graders == (["safe", "helpful"] if n % 2 else ["helpful"]), line
        assert "the table was not booked" in line and "no answer yet" not in line
    messages = {body["run"]["trace_id"]: body for _, body, _ in receiver.accepted}
    assert sorted(messages) == sorted(traces) and len(receiver.accepted) == 4
    for n, trace_id in enumerate(traces):
        assert [g["grader"] for g in messages[trace_id]["grades"]] == (["safe", "helpful"] if n % 2 else ["helpful"])
    # The shutdown summary (with grading workers, each says what it graded).
    assert sum(int(n) for n in re.findall(r"graded (\d+) run\(s\) in the last", server.log())) == 4
    assert sum(int(n) for n in re.findall(r"; (\d+) run\(s\) failed", server.log())) == 4


def test_a_judge_later_than_its_timeout_gets_a_line_of_its_own_marked_late(serve: Serve, fake: FakeOpenAI) -> None:
    fake.script(Reply.error(500), Reply.grade(0.1, "the table was not booked"))  # answers after a 2-4 s backoff
    judge = {"base_url": fake.base_url, "timeout": "1s", "max_retries": 1, "backoff": "4s"}
    with Receiver() as receiver:
        suite = {"name": "booking", "match": {"service.name": "booking-agent"}, "graders": [SAFE, HELPFUL]}
        server = serve(
            {
                "judge": judge,
                "suites": [suite],
                "sinks": [{"type": "webhook", "url": receiver.url, "max_per_second": 100}],
            }
        )
        trace_id = booking_run(server.grpc_address, 1)
        receiver.wait_for(2)
        assert server.stop() == 0

    [first, late] = run_lines(server)[trace_id]
    assert first.startswith("run failed: ") and re.findall(r"grader=(\w+):", first) == ["safe"]
    assert first.endswith("| no answer yet from booking/helpful (judge.timeout)")
    assert late.startswith("run failed (late judge verdict): ") and re.findall(r"grader=(\w+):", late) == ["helpful"]
    [(key1, body1, _), (key2, body2, _)] = receiver.accepted
    assert (body1["part"], body1["waiting"], [g["grader"] for g in body1["grades"]]) == (
        1,
        ["booking/helpful"],
        ["safe"],
    )
    assert (body2["part"], body2["waiting"], [g["grader"] for g in body2["grades"]]) == (2, [], ["helpful"])
    assert key1 != key2


def test_a_run_is_handed_on_once_complete_or_at_its_deadline_and_its_late_grades_after() -> None:
    """The gathering alone, with a clock: what the server's tick and shutdown (`expire(inf)`) hand on."""
    now = [0.0]
    notices: list[GradedRun] = []
    gathering = Gathering(notices.append, wait=60.0, clock=lambda: now[0])
    run = Trajectory(trace_id="a" * 32, span_id="b" * 16)
    code = Grade(run.trace_id, run.span_id, "booking", "safe", 0.0, False, "fail", "called delete_account")
    judged = replace(code, grader="helpful", rationale="not booked")

    quick: Future[Grade] = Future()
    gathering.add(run, [code], [quick], ["booking/helpful"])
    assert notices == []  # waits for the judge
    quick.set_result(judged)
    assert [(n.grades, n.waiting, n.part) for n in notices] == [((code, judged), (), 1)]

    notices.clear()
    slow: Future[Grade] = Future()
    broken: Future[Grade] = Future()
    gathering.add(run, [code], [slow, broken], ["booking/helpful", "booking/tone"])
    now[0] = 59.0
    gathering.expire()
    assert notices == []
    broken.set_exception(RuntimeError("a bug in a judge callback"))  # nothing to hand on, no longer awaited
    gathering.expire(math.inf)  # shutdown
    assert [(n.grades, n.waiting, n.part) for n in notices] == [((code,), ("booking/helpful",), 1)]
    slow.set_result(judged)
    assert [(n.grades, n.part, n.key) for n in notices[1:]] == [((judged,), 2, f"{'a' * 32}-{'b' * 16}-r1-p2")]
    assert gathering.open_runs == 0
