"""Changing a grader safely, end to end: a running server archives the traffic it grades; a rubric's threshold is
raised; the new config backfills the archive after an estimate of its judge calls that matches the calls then
made (the fake judge counting tokens); `--compare` finds exactly the runs whose verdict flipped."""

from __future__ import annotations

import json
import math
import os
import pty
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from otelgrade.cli import main
from tests.conftest import ServeProcess
from tests.fake_openai import FakeOpenAI, Reply
from tests.paths import FIXTURES

QUALITIES = (0.3, 0.6, 0.9)  # what the fake judge scores each run's answer: fail, pass then fail, pass
RUNS = 12


def rubric(threshold: float) -> dict[str, Any]:
    return {"name": "helpful", "type": "rubric", "prompt": "Is the answer helpful?", "threshold": threshold}


def suites(threshold: float) -> list[dict[str, Any]]:
    graders = [{"name": "budget", "type": "max_tool_calls", "max": 5}, rubric(threshold)]
    return [{"name": "support", "match": {"service.name": "support-agent"}, "graders": graders}]


def tokens(text: str) -> int:
    """How the fake judge counts a message's tokens."""
    return math.ceil(len(text) / 4)


def judge_reply(body: dict[str, Any]) -> Reply:
    """Scores the quality the answer states, and reports the tokens of the messages it was sent."""
    user = body["messages"][-1]["content"]
    quality = float(re.findall(r"quality (\d\.\d)", user)[-1])
    prompt = sum(tokens(m["content"]) for m in body["messages"])
    return Reply.grade(quality, usage=(prompt, 20))


def send_runs(server: ServeProcess) -> dict[str, float]:
    """Support-agent runs whose answers state their quality, exported by the SDK; trace id -> quality."""
    provider = TracerProvider(resource=Resource({"service.name": "support-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{server.http_url}/v1/traces")))
    tracer = provider.get_tracer("support.agent")
    sent = {}
    for i in range(RUNS):
        quality = QUALITIES[i % len(QUALITIES)]
        user = [{"role": "user", "parts": [{"type": "text", "content": f"question {i}"}]}]
        answer = [{"role": "assistant", "parts": [{"type": "text", "content": f"answer {i}, of quality {quality}"}]}]
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": json.dumps(user),
            "gen_ai.output.messages": json.dumps(answer),
        }
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
        with tracer.start_as_current_span("invoke_agent support", attributes=agent) as run:
            with tracer.start_as_current_span("chat gpt-4o-mini", attributes=chat):
                pass
            sent[f"{run.get_span_context().trace_id:032x}"] = quality
    provider.shutdown()
    return sent


def write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_archive_change_a_threshold_backfill_and_find_the_flips(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    archive = tmp_path / "archive"
    with FakeOpenAI(default=judge_reply) as fake:
        judge = {"model": "gpt-4o-mini", "base_url": fake.base_url}
        sinks = [{"type": "jsonl", "path": "grades.jsonl"}, {"type": "archive", "path": str(archive)}]
        server = serve({"judge": judge, "suites": suites(0.5), "sinks": sinks})
        sent = send_runs(server)
        server.wait_for_metric("otelgrade_grades_total", {"grader": "helpful"}, RUNS)
        with urllib.request.urlopen(f"{server.metrics_url}/api/grades?grader=helpful", timeout=5) as response:
            shown = json.load(response)["grades"]
        some_run = next(iter(sent))
        with urllib.request.urlopen(f"{server.metrics_url}/runs/{some_run}", timeout=5) as response:
            page = response.read().decode()
        server.stop()
        live = {g["trace_id"]: g for g in server.grades() if g["grader"] == "helpful"}
        assert {t: g["outcome"] for t, g in live.items()} == {
            t: "pass" if q >= 0.5 else "fail" for t, q in sent.items()
        }

        old = write(tmp_path / "old.yaml", {"judge": judge, "suites": suites(0.5)})
        new = write(tmp_path / "new.yaml", {"judge": judge, "suites": suites(0.7)})
        assert main(["check-config", old]) == 0
        old_version = re.search(r"support/helpful\s+rubric\s+version (\w+)", capsys.readouterr().out)
        assert old_version and {g["version"] for g in live.values()} == {old_version.group(1)}
        assert {g["version"] for g in shown} == {old_version.group(1)} and len(shown) == RUNS  # /api/grades
        assert f"version <code>{old_version.group(1)}</code>" in page  # the run page

        # The backfill, with no one at a terminal (as in a CI job): the estimate printed first is what the judge
        # then counts.
        asked = len(fake.requests)
        assert main(["grade", "--config", new, "--since", "1h", "--format", "json", str(archive)]) == 1
        out, err = capsys.readouterr()
        calls = fake.requests[asked:]
        estimate = re.search(r"support/helpful\s+gpt-4o-mini\s+(\d+) call\(s\) on (\d+) run\(s\)\s+~(\d+) input", err)
        assert estimate, err
        counted = sum(sum(tokens(m["content"]) for m in body["messages"]) for body in calls)
        assert (int(estimate.group(1)), int(estimate.group(2)), int(estimate.group(3))) == (len(calls), RUNS, counted)
        backfilled = {g["trace_id"]: g for g in map(json.loads, out.splitlines()) if g["grader"] == "helpful"}
        assert {t: g["outcome"] for t, g in backfilled.items()} == {
            t: "pass" if q >= 0.7 else "fail" for t, q in sent.items()
        }
        assert {g["version"] for g in backfilled.values()} != {old_version.group(1)}

        # Compare: exactly the runs of quality 0.6 flip, and only the changed grader.
        asked = len(fake.requests)
        assert main(["grade", "--compare", old, new, "--yes", "--format", "json", str(archive)]) == 1
        compared = {c["grader"]: c for c in map(json.loads, capsys.readouterr().out.splitlines())}
        # only the threshold changed: the judge is asked once per run, its answer read with each threshold
        assert len(fake.requests) - asked == RUNS  # before: twice as many
    helpful, budget = compared["support/helpful"], compared["support/budget"]
    flipped = {run["trace_id"] for run in helpful["flips"]["pass->fail"]}
    assert flipped == {t for t, q in sent.items() if q == 0.6}
    assert set(helpful["flips"]) == {"pass->fail"}
    assert helpful["agreement"] == pytest.approx(1 - len(flipped) / RUNS)
    assert budget["flips"] == {} and budget["agreement"] == 1.0
    assert budget["old_version"] == budget["new_version"] != helpful["new_version"]


@pytest.mark.parametrize(("answer", "asked"), [("n", 0), ("y", 1)])
def test_at_a_terminal_grade_asks_before_spending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, asked: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    captures = FIXTURES / "frameworks" / "crewai" / "happy"
    with FakeOpenAI(default=Reply.grade(0.9)) as fake:
        config = {"judge": {"base_url": fake.base_url}, "suites": [{"name": "s", "graders": [rubric(0.5)]}]}
        path = write(tmp_path / "otelgrade.yaml", config)
        controller, terminal = pty.openpty()
        process = subprocess.Popen(
            [sys.executable, "-m", "otelgrade", "grade", "--config", path, str(captures)],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(terminal)
        os.write(controller, f"{answer}\n".encode())
        _, err = process.communicate(timeout=120)
        os.close(controller)
        assert "Spend 1 judge call(s)" in err and "? [y/N]" in err
        assert len(fake.requests) == asked
        assert process.returncode == (2 if answer == "n" else 0), err
