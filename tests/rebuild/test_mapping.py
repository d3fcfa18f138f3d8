"""`rebuild.mappings`: a framework with attribute names of its own is read through the config, without code.

The trace is made by the OpenTelemetry SDK and encoded by its own OTLP encoder, as an exporter would send it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

MAPPINGS = """
rebuild:
  mappings:
    - {match: {span.name: "^acme.agent"}, role: agent, name: acme.agent_id, input: acme.request, output: acme.reply}
    - {match: {acme.kind: model}, role: llm, name: acme.model, input: acme.prompt, output: acme.completion}
    - {match: {acme.kind: action}, role: tool, name: acme.action, arguments: acme.params, result: acme.outcome}
suites:
  - name: acme
    graders:
      - {name: safe, type: tools_not_called, tools: [delete_account]}
      - {name: answered, type: output_contains, values: [booked]}
"""


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of a home-grown agent: two model calls, two actions (one fails), an answer."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "acme-travel"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("acme.agents")
    with (
        tracer.start_as_current_span("handle_request"),
        tracer.start_as_current_span(
            "acme.agent.run",
            attributes={"acme.agent_id": "planner", "acme.request": "Book UA123", "acme.reply": "UA123 booked"},
        ),
    ):
        for prompt, completion in (("Book UA123", "search first"), ("found it", "UA123 booked")):
            tracer.start_span(
                "model",
                attributes={
                    "acme.kind": "model",
                    "acme.model": "m1",
                    "acme.prompt": prompt,
                    "acme.completion": completion,
                },
            ).end()
        with tracer.start_as_current_span(
            "act",
            attributes={"acme.kind": "action", "acme.action": "search_flights", "acme.params": '{"q": "UA123"}'},
        ) as span:
            span.set_attribute("acme.outcome", "UA123 09:00")
        with tracer.start_as_current_span(
            "act", attributes={"acme.kind": "action", "acme.action": "charge_card", "acme.params": '{"amount": 5}'}
        ) as span:
            span.set_status(Status(StatusCode.ERROR, "card declined"))
    folder = tmp_path_factory.mktemp("acme")
    (folder / "0000.pb").write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    (folder / "otelgrade.yaml").write_text(MAPPINGS)
    return folder


def otelgrade(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "otelgrade", *map(str, args)], capture_output=True, text=True, timeout=60
    )


def test_without_mappings_the_trace_has_no_run(capture: Path) -> None:
    """Spans of no known convention make no run (a run of the HTTP root would pass every safety grader)."""
    assert otelgrade("trajectories", capture / "0000.pb").stdout.strip() == ""


def test_mappings_read_the_agent_its_model_calls_and_its_actions(capture: Path) -> None:
    result = otelgrade("trajectories", "--config", capture / "otelgrade.yaml", capture / "0000.pb")
    (run,) = map(json.loads, result.stdout.splitlines())
    assert (run["agent_name"], run["input"], run["output"], run["source"]) == (
        "planner",
        "Book UA123",
        "UA123 booked",
        "mapping",
    )
    assert [c["model"] for c in run["llm_calls"]] == ["m1", "m1"]
    calls = [(c["name"], c["arguments"], c["result"], c["error"]) for c in run["tool_calls"]]
    assert calls == [
        ("search_flights", {"q": "UA123"}, "UA123 09:00", False),
        ("charge_card", {"amount": 5}, None, True),
    ]
    graded = otelgrade("grade", "--config", capture / "otelgrade.yaml", "--format", "json", capture / "0000.pb")
    assert {g["grader"]: g["outcome"] for g in map(json.loads, graded.stdout.splitlines())} == {
        "safe": "pass",
        "answered": "pass",
    }


def test_inspect_says_which_mapping_read_each_span(capture: Path) -> None:
    shown = otelgrade("inspect", "--config", capture / "otelgrade.yaml", capture / "0000.pb").stdout
    assert "'acme.agent.run' [mapping] -> run" in shown
    assert "'act' [mapping] -> tool call: `charge_card`" in shown


@pytest.mark.parametrize(
    ("mapping", "complaint"),
    [
        ("{match: {span.name: x}, role: tool, argumnets: a}", "argumnets"),
        ("{match: {span.name: x}, role: agent, arguments: a}", "`agent` mappings read input, name, output, not"),
        ("{match: {span.name: x}, role: tools}", "role"),
        ("{match: {}, role: tool}", "match"),
    ],
)
def test_a_typo_in_a_mapping_is_a_config_error(tmp_path: Path, mapping: str, complaint: str) -> None:
    path = tmp_path / "otelgrade.yaml"
    path.write_text(f"rebuild:\n  mappings:\n    - {mapping}\n")
    result = otelgrade("check-config", path)
    assert result.returncode == 2
    assert "rebuild.mappings[0]" in result.stderr and complaint in result.stderr
