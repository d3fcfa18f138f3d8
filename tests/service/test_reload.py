"""Reload and shutdown under trouble: a config file is installed only once written whole, a file that would
silently stop all grading (or an alias bomb) is refused (logged and counted), a reload is read off the event loop,
and SIGTERM stops within `server.shutdown_timeout` however much is held or whatever a judge does: code grades
given, the judge's grades recorded as `error`, runs not graded counted, and kept by a spool for the next start."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

from tests.conftest import ServeProcess
from tests.core.test_patterns import send_run
from tests.fake_openai import FakeOpenAI, Reply
from tests.intake.test_backpressure import post
from tests.receivers_harness import sid, span_pb, traces_request
from tests.service.test_server import WEATHER_SUITE, agent_run
from tests.test_config import ALIAS_BOMB

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


def test_a_yaml_alias_bomb_is_refused_on_reload_while_the_loop_keeps_answering(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE]})
    with server.health_probe() as stalls:
        server.write_config(ALIAS_BOMB)
        server.wait_for_metric("otelgrade_config_reloads_total", {"result": "refused"}, 1)
        kept = send_and_wait(server, "weather")
    assert "YAML aliases" in server.log()
    assert max(stalls) < 1.0, f"/healthz took {max(stalls):.2f}s during the reload"
    assert server.stop() == 0
    assert suites_graded(server)[kept] == {"weather"}


def test_a_large_config_is_read_on_a_thread_while_the_loop_keeps_answering(serve: Serve) -> None:
    server = serve({"suites": [WEATHER_SUITE]})
    agents = [f"agent-{i}" for i in range(60_000)]  # a megabyte of YAML: seconds to parse
    large = {**WEATHER_SUITE, "name": "weather_v2", "match": {"agent_name": ["weather", *agents]}}
    with server.health_probe() as stalls:
        began = time.monotonic()
        server.write_config({**server.config, "suites": [large]})
        server.wait_for_metric("otelgrade_config_reloads_total", {"result": "ok"}, 1, timeout=30)
        took = time.monotonic() - began
    assert took > 1.0  # the reload did take a while
    assert max(stalls) < 0.5, f"/healthz took {max(stalls):.2f}s during a {took:.1f}s reload"
    trace_id = send_and_wait(server, "weather_v2")
    assert server.stop() == 0
    assert suites_graded(server)[trace_id] == {"weather_v2"}


def held_runs(server: ServeProcess, count: int, first: int = 1) -> set[str]:
    """Send `count` one-span agent runs over OTLP/HTTP, in requests of 5000; their trace ids."""
    trace_ids = [n.to_bytes(16, "big") for n in range(first, first + count)]
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bulk"}
    for start in range(0, count, 5000):
        spans = [
            span_pb(sid(1), trace_id=t, name="invoke_agent bulk", **agent) for t in trace_ids[start : start + 5000]
        ]
        assert post(server, traces_request(spans)).status == 200
    server.wait_for_metric("otelgrade_traces_in_flight", None, count)
    return {t.hex() for t in trace_ids}


HOLD = {"assembly": {"settle": "60s", "idle_timeout": "60s", "max_traces": 100_000}}


def test_shutdown_stops_grading_held_runs_at_the_timeout(serve: Serve) -> None:
    server = serve({**HOLD, "server": {"shutdown_timeout": "1s"}})
    sent = held_runs(server, 20_000)
    began = time.monotonic()
    server.send_signal(signal.SIGTERM)
    exit_code = server.process.wait(60)
    took = time.monotonic() - began
    assert exit_code == 0, server.log()
    assert took < 1 + 3, f"stopped {took:.1f}s after SIGTERM with a 1s shutdown_timeout"
    found = re.findall(  # one line per process that held some (with grading workers, per worker)
        r"shutdown: (\d+) trace\(s\) not graded within server.shutdown_timeout \(1s\); they are lost", server.log()
    )
    assert found, server.log()[-2000:]
    graded = {g["trace_id"] for g in server.grades()}
    assert graded < sent and len(graded) + sum(int(n) for n in found) == len(sent)


def test_runs_not_graded_by_the_shutdown_timeout_are_graded_at_the_next_start(serve: Serve, tmp_path: Path) -> None:
    spool = {"durability": {"spool_dir": str(tmp_path / "spool")}}
    first = serve({**HOLD, **spool, "server": {"shutdown_timeout": "0s"}})
    sent = held_runs(first, 200)
    assert first.stop() == 0
    not_graded = re.findall(r"shutdown: (\d+) trace\(s\) not graded", first.log())  # per grading worker
    assert sum(int(n) for n in not_graded) == 200 and "they stay in the spool" in first.log()
    assert first.grades() == []
    second = serve({**spool, "assembly": {"settle": "200ms"}})
    second.wait_for_metric("otelgrade_runs_graded_total", {"suite": "default"}, 200)
    assert second.stop() == 0
    assert {g["trace_id"] for g in second.grades()} == sent
