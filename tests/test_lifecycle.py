"""Reload and shutdown under trouble: a config file is installed only once written whole, a file that would
silently stop all grading is refused (logged and counted), and SIGTERM with a judge that never answers stops
within `server.shutdown_timeout`, code grades given and the judge's grades recorded as `error`."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

from tests.conftest import ServeProcess
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_regex_budget import send_run
from tests.test_server import WEATHER_SUITE, agent_run

Serve = Callable[..., ServeProcess]
CHECK_AFTER_WRITE = 1.5  # longer than the server's config check interval


def suites_graded(server: ServeProcess) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for grade in server.grades():
        out.setdefault(grade["trace_id"], set()).add(grade["suite"])
    return out


def send_and_wait(server: ServeProcess, suite: str) -> str:
    trace_id = agent_run(OTLPSpanExporter(endpoint=server.grpc_address, insecure=True))
    server.wait_for_metric("otelgrade_runs_graded_total", {"suite": suite}, lambda v: v >= 1)
    return trace_id


def test_a_config_written_slowly_is_read_whole(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE]})
    text = yaml.safe_dump({**server.config, "suites": [{**WEATHER_SUITE, "name": "weather_v2"}]})
    with server.config_path.open("w") as file:  # an editor or a config tool writing a few bytes at a time
        for i in range(0, len(text), 16):
            file.write(text[i : i + 16])
            file.flush()
            if i == 0:
                server.send_signal(signal.SIGHUP)  # asked to reload while the file is a stub
            time.sleep(0.02)
    server.wait_for_metric("otelgrade_config_reloads_total", {"result": "ok"}, 1)
    time.sleep(CHECK_AFTER_WRITE)  # the change noticed by the file watcher reloads the same whole file again
    assert server.metric("otelgrade_config_reloads_total", {"result": "refused"}) == 0, server.log()
    trace_id = send_and_wait(server, "weather_v2")
    assert server.stop() == 0
    assert suites_graded(server)[trace_id] == {"weather_v2"}


def test_an_emptied_config_is_refused_unless_it_says_so(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE]})
    server.write_config("")  # truncated, or emptied by mistake
    server.wait_for_metric("otelgrade_config_reloads_total", {"result": "refused"}, 1)
    kept = send_and_wait(server, "weather")
    assert "to grade nothing on purpose, write `suites: []`" in server.log()

    server.write_config({**server.config, "suites": []})
    server.wait_for_metric("otelgrade_config_reloads_total", {"result": "ok"}, 1)
    ignored = agent_run(OTLPSpanExporter(endpoint=server.grpc_address, insecure=True))
    server.wait_for_metric("otelgrade_traces_completed_total", {"reason": "complete"}, 2)
    assert server.stop() == 0
    graded = suites_graded(server)
    assert graded[kept] == {"weather"} and ignored not in graded


@pytest.fixture
def silent_judge() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=Reply.grade(1.0, delay=300)) as fake:  # never answers within the test
        yield fake


def test_shutdown_is_bounded_while_a_judge_hangs(
    serve: Serve, silent_judge: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    judge = {"name": "helpful", "type": "rubric", "prompt": "Did the agent help the user? {trajectory}"}
    budget = {"name": "tool_budget", "type": "max_tool_calls", "max": 5}
    server = serve(
        {
            "suites": [{"name": "judged", "graders": [budget, judge]}],
            "judge": {"base_url": silent_judge.base_url, "timeout": "10m", "max_retries": 0},
            "server": {"shutdown_timeout": "2s"},
        }
    )
    runs = [send_run(server, "", f"answer {i}") for i in range(3)]
    deadline = time.monotonic() + 15
    while len(silent_judge.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(silent_judge.requests) == 3

    began = time.monotonic()
    server.send_signal(signal.SIGTERM)
    exit_code = server.process.wait(30)
    took = time.monotonic() - began
    assert exit_code == 0, server.log()
    assert took < 2 + 5, f"stopped after {took:.1f}s"  # the timeout, plus a margin for start-up of shutdown
    outcomes = {(g["trace_id"], g["grader"]): g for g in server.grades()}
    for trace_id in runs:
        assert outcomes[(trace_id, "tool_budget")]["outcome"] == "pass"
        helpful = outcomes[(trace_id, "helpful")]
        assert helpful["outcome"] == "error" and helpful["metadata"]["reason"] == "shutdown"
