"""Every registered plugin of every kind keeps its kind's contract, and every kind refuses a name given twice.

A grader type is built from the example the grader reference shows (`graders.reference.EXAMPLES`); a sink from
the example block its settings' docstring opens with; the extractors' table below gives the configuration of
those that need one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2

from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.registry import DuplicateName, Registry, UnknownName
from otelgrade.core.settings import AssemblySettings
from otelgrade.core.spans import Span
from otelgrade.core.trajectory import LLMCall, ToolCall, Trajectory
from otelgrade.export.sinks import SINK_TYPES, SinkSettings, read_sink, sink_type
from otelgrade.grade.graders import grader, grader_specs, grader_type, list_graders
from otelgrade.grade.graders.base import GRADER_TYPES
from otelgrade.grade.graders.custom import GRADING_FUNCTIONS, Sample, custom_grader
from otelgrade.grade.graders.extractors import EXTRACTORS, check_extractor, extract, extractor
from otelgrade.grade.graders.reference import example
from otelgrade.grade.graders.specs import NATIVE_FILES, NATIVE_SHAPES, native_file, native_shape
from otelgrade.intake.assemble import Assembler
from otelgrade.intake.decode import decode_logs
from otelgrade.intake.ingest import Ingest
from otelgrade.intake.receivers import receiver_type, receiver_types
from otelgrade.rebuild import rebuild
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import DIALECT_NAMES, DIALECTS

RUN = Trajectory(
    trace_id="0" * 32,
    span_id="1" * 16,
    service_name="booking",
    agent_name="booker",
    source="genai",
    input="Book a flight to Oslo",
    output='Booked: {"confirmation": "ABC123"}',
    duration_s=2.0,
    llm_calls=[
        LLMCall(
            model="gpt-4o-mini",
            input_tokens=20,
            output_tokens=10,
            input_messages=[{"role": "user", "content": "Book a flight to Oslo"}],
            output_messages=[{"role": "assistant", "content": "Booked"}],
            finish_reason="stop",
        )
    ],
    tool_calls=[ToolCall(name="book_flight", call_id="c1", arguments={"to": "OSL"}, result='{"ok": true}')],
    messages=[
        {"role": "user", "content": "Book a flight to Oslo"},
        {"role": "assistant", "content": 'Booked: {"confirmation": "ABC123"}'},
    ],
    steps=1,
    ground_truth="ABC123",
)

PASS = {"type": "no_loops"}
EXTRACTOR_CONFIGS: dict[str, dict[str, Any]] = {
    "pattern": {"pattern": "ABC\\d+"},
    "tool_arguments": {"tool_name": "book_flight"},
    "tool_output": {"tool_name": "book_flight"},
    "after_marker": {"marker": "Booked:"},
    "memory_block": {"block_label": "human"},
}


def grader_types() -> list[str]:
    """The grader types otelgrade ships (not those other test modules register)."""
    return [name for name in list_graders() if grader_type(name).factory.__module__.startswith("otelgrade.")]


@pytest.mark.parametrize("type_name", grader_types())
def test_every_grader_type_builds_from_its_reference_example_and_grades_a_run(type_name: str, tmp_path: Path) -> None:
    """Built from the example docs/graders.md shows (`graders.reference`), as a suite builds it, in the first scope
    it grades in (judges off: they say `skipped`); it grades a plain run without raising."""
    (tmp_path / "helpful.txt").write_text("Was the answer helpful? {submission}")
    block = {"scope": grader_type(type_name).scopes[0], **example(type_name)}
    (spec,) = grader_specs(block, "case", base_dir=tmp_path)
    for _call, verdict in spec.scoped().verdicts(RUN):
        result = verdict.result(timeout=5) if isinstance(verdict, Future) else verdict
        assert not result.rationale.startswith("grader raised"), result.rationale  # grade_safely caught it
        assert result.outcome in ("pass", "fail", "skipped", "error")


def test_every_alias_names_the_same_grader_type_as_its_canonical_name() -> None:
    for name, entry in GRADER_TYPES.items():
        assert GRADER_TYPES.get(entry.name) is entry, name
        assert name == entry.name or name in entry.aliases or name in entry.deprecated


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_every_dialect_reads_an_empty_span_without_raising(dialect: Dialect) -> None:
    empty = Span("0" * 32, "1" * 16, None, "", 0, 0, 0, 0, "", {}, [], {})
    assert dialect.read(empty) is None or dialect.name == "genai"
    named = Span("0" * 32, "1" * 16, None, "chat", 3, 0, 1, 0, "", dict.fromkeys(dialect.marks, ""), [], {})
    dialect.read(named)  # its marks with empty values: facts or None, never an exception


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d.event_loggers], ids=lambda d: d.name)
def test_a_dialects_event_logger_records_are_kept_by_decode_and_others_dropped(dialect: Dialect) -> None:
    """A quirk declared on the dialect's record alone reaches decode: its framework's event-logger records
    (no GenAI event name) are kept under its event name; the same record from another scope is dropped."""
    for scope, event in dialect.event_loggers.items():
        kept = decode_logs(logs_request(scope))
        assert [e.event.name for e in kept.events] == [event]
        other = decode_logs(logs_request("some.other.logger"))
        assert not other.events and other.dropped == {"not_genai": 1}


def logs_request(scope: str) -> bytes:
    record = logs_pb2.LogRecord(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
    record.body.string_value = "{}"
    scoped = logs_pb2.ScopeLogs(scope=common_pb2.InstrumentationScope(name=scope), log_records=[record])
    request = logs_service_pb2.ExportLogsServiceRequest(resource_logs=[logs_pb2.ResourceLogs(scope_logs=[scoped])])
    return request.SerializeToString()


def genai_span(n: str, parent: str | None, operation: str, **names: str) -> Span:
    attrs = {"gen_ai.operation.name": operation, **{f"gen_ai.{k.replace('_', '.')}": v for k, v in names.items()}}
    return Span("0" * 32, n * 16, parent and parent * 16, f"{operation} {n}", 1, int(n), 9, 0, "", attrs, [], {})


def test_a_dialects_answer_tool_is_not_a_tool_call_of_the_run() -> None:
    """pydantic-ai's output tool, declared on its record, delivers the answer: it is no tool call of the run."""
    (answer_tool,) = next(d for d in DIALECTS if d.name == "pydantic-ai").answer_tools
    spans = [
        genai_span("1", None, "invoke_agent", agent_name="booker"),
        genai_span("2", "1", "execute_tool", tool_name=answer_tool),
        genai_span("3", "1", "execute_tool", tool_name="book_flight"),
    ]
    (run,) = rebuild(spans)
    assert [c.name for c in run.tool_calls] == ["book_flight"]


def test_dialects_are_asked_by_priority_and_named_once() -> None:
    assert [d.priority for d in DIALECTS] == sorted(d.priority for d in DIALECTS)
    assert sorted(d.name for d in DIALECTS) == DIALECT_NAMES.names()


def documented_example(settings: type[SinkSettings]) -> dict[str, Any]:
    """The `{type: ..., ...}` block a sink's settings docstring opens with, as YAML reads it."""
    doc = settings.__doc__ or ""
    assert doc.startswith("`{"), f"{settings.__name__}'s docstring opens with no example block"
    block = yaml.safe_load(doc[1 : doc.index("}`") + 1])
    assert isinstance(block, dict)
    return block


@pytest.mark.parametrize("name", SINK_TYPES.names())
def test_every_sink_builds_from_its_documented_example_writes_flushes_and_closes(name: str, tmp_path: Path) -> None:
    example = documented_example(SINK_TYPES.get(name))
    assert example["type"] == name
    sink = read_sink(example).resolve_paths(tmp_path).build(Metrics())
    sink.write([])
    sink.flush()
    sink.close()


@pytest.mark.parametrize("name", sorted(receiver_types()))
def test_every_receiver_is_named_starts_on_a_free_port_and_stops(name: str) -> None:
    kind = receiver_types()[name]
    assert kind.name == name
    metrics = Metrics()
    ingest = Ingest(Assembler(AssemblySettings(), metrics), metrics, 1024 * 1024)

    async def start_and_stop() -> int:
        receiver = kind.factory("127.0.0.1:0", ingest)
        port = await receiver.start()
        await receiver.stop()
        return port

    assert asyncio.run(start_and_stop()) > 0
    for family in ("otelgrade_spans_received_total", "otelgrade_log_records_received_total"):
        assert metrics.registry.get_sample_value(family, {"protocol": name}) == 0  # its series, from the start


@pytest.mark.parametrize("name", EXTRACTORS.names())
def test_every_extractor_checks_its_config_and_extracts_from_a_run(name: str) -> None:
    config = EXTRACTOR_CONFIGS.get(name, {})
    check_extractor(name, config)
    if name == "memory_block":  # a trace carries no memory unless the run's attributes hold it
        run = RUN.model_copy(update={"attributes": {"letta.memory.human": "likes window seats"}})
        assert extract(run, name, config) == "likes window seats"
    else:
        assert isinstance(extract(RUN, name, config), str | None)


@pytest.mark.parametrize("name", GRADING_FUNCTIONS.names())
def test_every_grading_function_scores_a_submission(name: str) -> None:
    sample = Sample(input=RUN.input, ground_truth="ABC123", trajectory=RUN)
    assert GRADING_FUNCTIONS.get(name)(sample, RUN.output or "") is not None


@pytest.mark.parametrize("system", NATIVE_SHAPES.names())
def test_every_native_grader_shape_declines_otelgrades_own_block(system: str) -> None:
    assert NATIVE_SHAPES.get(system)({"name": "booked", "type": "tool_succeeded"}, "booked") is None


@pytest.mark.parametrize("system", NATIVE_FILES.names())
def test_every_native_file_shape_declines_otelgrades_own_config(system: str) -> None:
    assert NATIVE_FILES.get(system)({"suites": [{"name": "s", "graders": [PASS]}]}) is None


# --- one name, one plugin ------------------------------------------------------------------------


def _stub(*_: Any) -> None:
    return None


@pytest.fixture
def cleanup() -> Iterator[None]:
    """Nothing a refused registration leaves behind: each registry holds what it held before."""
    registries: list[Registry[Any]] = [
        GRADER_TYPES,
        GRADING_FUNCTIONS,
        EXTRACTORS,
        NATIVE_SHAPES,
        NATIVE_FILES,
        SINK_TYPES,
        DIALECT_NAMES,
    ]
    before = [r.items() for r in registries]
    yield
    assert [r.items() for r in registries] == before


REGISTRATIONS = {
    "grader type": lambda: grader("rubric")(_stub),
    "grader alias": lambda: grader("my_new_grader", "output_matches")(_stub),
    "grading function": lambda: custom_grader(name="exact_match")(_stub),
    "extractor": lambda: extractor("last_assistant")(_stub),
    "grader block shape": lambda: native_shape("letta-evals")(_stub),
    "config file shape": lambda: native_file("potato")(_stub),
    "sink type": lambda: sink_type("jsonl")(type("Other", (), {})),  # type: ignore[type-var]
    "receiver": lambda: receiver_type("grpc", None)(_stub),
    "dialect": lambda: DIALECT_NAMES.add("genai", Dialect("genai", 0, lambda span: None)),
}


@pytest.mark.parametrize("kind", REGISTRATIONS)
@pytest.mark.usefixtures("cleanup")
def test_every_kind_refuses_a_second_plugin_under_a_taken_name(kind: str) -> None:
    with pytest.raises(DuplicateName, match="registered twice: by otelgrade\\.") as refused:
        REGISTRATIONS[kind]()
    assert "another name" in str(refused.value)


def test_registering_the_same_plugin_again_is_not_a_duplicate() -> None:
    registry: Registry[object] = Registry("widget")
    widget = object()
    registry.add("w", widget)
    assert registry.add("w", widget) is widget
    assert registry.names() == ["w"]


def test_an_unknown_name_offers_the_closest_and_lists_the_known_ones() -> None:
    with pytest.raises(UnknownName) as unknown:
        SINK_TYPES.get("jsnl")
    assert unknown.value.path == "type"
    assert "unknown sink type 'jsnl' (did you mean `jsonl`?)" in str(unknown.value)
    assert f"known types: {', '.join(SINK_TYPES.names())}" in str(unknown.value)
    with pytest.raises(ConfigError, match=r"unknown extractor 'last'.*; known extractors: after_marker"):
        EXTRACTORS.get("last")
