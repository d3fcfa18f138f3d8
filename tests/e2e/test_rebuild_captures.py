"""Every run of every captured trace is rebuilt as its ground truth (`expected.json`) says.

Walks `tests/fixtures/traces`, `tests/fixtures/logs` and `tests/fixtures/frameworks` (real framework
instrumentation captured by `tests/capture/harness.py`), plus the folders named by
`OTELGRADE_FIXTURES_DIR` and `OTELGRADE_LOGS_FIXTURES_DIR` when set (same layout:
`<source>/expected.json`, `<source>/<scenario>/*.pb` and `*.logs.pb`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from otelgrade.core.trajectory import Trajectory
from tests.captures import load_folder, rebuild_folder
from tests.paths import FIXTURES

HERE = FIXTURES
ROOTS = [HERE / "traces", HERE / "logs", HERE / "frameworks"] + [
    Path(p) for p in (os.environ.get("OTELGRADE_FIXTURES_DIR"), os.environ.get("OTELGRADE_LOGS_FIXTURES_DIR")) if p
]


def scenarios() -> list[Any]:
    out = []
    for root in ROOTS:
        for expected_file in sorted(root.glob("*/expected.json")):
            expected = json.loads(expected_file.read_text())
            for name, spec in sorted(expected["scenarios"].items()):
                folder = expected_file.parent / name
                out.append(pytest.param(folder, spec, id=f"{root.name}/{expected_file.parent.name}/{name}"))
    return out


# --- comparison (the ground truth's rules: whitespace folded, expected text contained) -----


def fold(value: Any) -> str:
    return " ".join(str(value).split())


def as_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def differences(expected: dict[str, Any], got: Trajectory) -> list[str]:
    """What the rebuilt run gets wrong. A part the ground truth says the trace cannot carry (`lacks`) must be
    marked missing on the trajectory, and is not compared."""
    problems = []
    lacks = set(expected.get("lacks", ()))
    if set(got.lacks) != lacks:
        problems.append(f"lacks {got.lacks} != {sorted(lacks)}")
    if got.status != expected["status"]:
        problems.append(f"status {got.status} != {expected['status']}")
    if "input" not in lacks and expected.get("input") and fold(expected["input"]) not in fold(got.input or ""):
        problems.append(f"input {got.input!r}")
    if expected.get("output") is None:
        if got.output:
            problems.append(f"output {got.output!r} where none was produced")
    elif "output" not in lacks and fold(expected["output"]) not in fold(got.output or ""):
        problems.append(f"output {got.output!r}")
    if "handoffs" in expected:
        handoffs = [(h.from_agent, h.to_agent) for h in got.handoffs]
        if handoffs != [(h["from"], h["to"]) for h in expected["handoffs"]]:
            problems.append(f"handoffs {handoffs}")
    if "llm_calls" not in lacks and len(got.llm_calls) != expected["llm_calls"]:
        problems.append(f"{len(got.llm_calls)} LLM calls != {expected['llm_calls']}")
    want, have = expected["tool_calls"], got.tool_calls
    if "tool_calls" in lacks:
        return problems  # the calls the trace cannot show are not compared
    if [t["name"] for t in want] != [t.name for t in have]:
        problems.append(f"tools {[t.name for t in have]} != {[t['name'] for t in want]}")
        return problems
    for i, (e, g) in enumerate(zip(want, have, strict=True)):
        if "tool_arguments" not in lacks and as_json(e.get("arguments")) != as_json(g.arguments):
            problems.append(f"tool {i} arguments {g.arguments!r}")
        # a failure is part of the result: where the trace lacks results it need not show one, never invent one
        if bool(e.get("error")) != g.error and (g.error or "tool_results" not in lacks):
            problems.append(f"tool {i} error flag {g.error}")
        if "tool_results" not in lacks and not e.get("error") and e.get("result") is not None:
            exp, res = e["result"], g.result
            if res is None or (as_json(exp) != as_json(res) and fold(exp) not in fold(res)):
                problems.append(f"tool {i} result {res!r}")
    return problems


def find_run(expected: dict[str, Any], got: list[Trajectory], position: int) -> Trajectory:
    """The one trajectory of that agent whose input holds the expected request; else, where the trace does
    not name the agent (an agent called as a tool, a run whose agent span was lost), the run in the same
    position in start order."""
    matches = [
        t
        for t in got
        if t.agent_name == expected["agent_name"]
        and (not expected.get("input") or fold(expected["input"]) in fold(t.input or ""))
    ]
    assert len(matches) <= 1, f"{len(matches)} runs of {expected['agent_name']} for {expected.get('input')!r}"
    return matches[0] if matches else got[position]


@pytest.mark.parametrize(("folder", "spec"), scenarios())
def test_every_run_is_rebuilt_exactly(folder: Path, spec: dict[str, Any]) -> None:
    assert folder.is_dir(), (
        f"{folder.parent / 'expected.json'} names scenario {folder.name!r} but {folder} does not exist: "
        "capture it or remove it from the ground truth"
    )
    got = rebuild_folder(folder)
    trace_ids = set(spec.get("trace_ids") or ())
    nested_allowed = spec.get("nested_runs_allowed", False)
    pool = [
        t
        for t in got
        if (not trace_ids or t.trace_id in trace_ids) and not (nested_allowed and t.parent_span_id is not None)
    ]
    assert len(pool) == len(spec["runs"]), [t.agent_name for t in pool]
    for position, expected in enumerate(spec["runs"]):
        run = find_run(expected, pool, position)
        assert differences(expected, run) == []


@pytest.mark.parametrize(("folder", "spec"), scenarios())
def test_runs_are_internally_consistent(folder: Path, spec: dict[str, Any]) -> None:
    """Steps count model responses, tool steps point at one, and calls are in step order."""
    for run in rebuild_folder(folder):
        assert run.steps == len(run.llm_calls)
        assert [c.step for c in run.llm_calls] == list(range(1, run.steps + 1))
        assert [t.step for t in run.tool_calls] == sorted(t.step for t in run.tool_calls)
        assert all(0 <= t.step <= run.steps for t in run.tool_calls)
        assert run.service_name and run.attributes.get("service.name") == run.service_name
        assert run.start_time and run.end_time and run.duration_s is not None
        if "messages" not in run.lacks:
            assert run.messages
            assert run.status == "error" or run.messages[-1]["role"] in ("assistant", "tool")


FINISH_KEYS = ("gen_ai.response.finish_reasons", "gen_ai.response.finish_reason", "llm.finish_reason")


def test_a_model_call_whose_span_records_a_finish_reason_has_it() -> None:
    """Whatever the spelling (an array, its JSON text, one value, an enum member), every captured model call
    whose span records a finish reason has it, as the first reason's plain word. A failed call finished for no
    reason (a callback that records a failure on the application's span leaves the earlier call's beside it)."""
    checked: dict[str, int] = {}
    wrong = []
    for folder in sorted(p for p in (HERE / "frameworks").glob("*/*") if p.is_dir()):
        spans = {s.span_id: s for s in load_folder(folder)[0]}
        for run in rebuild_folder(folder):
            for call in run.llm_calls:
                attrs = spans[call.span_id].attributes if call.span_id in spans else {}
                recorded = next((attrs[k] for k in FINISH_KEYS if attrs.get(k)), None)
                if recorded is None or call.error:
                    continue
                source = folder.parent.name
                checked[source] = checked.get(source, 0) + 1
                reason = call.finish_reason or ""
                if not reason or reason.startswith("[") or "." in reason or reason.lower() not in str(recorded).lower():
                    wrong.append((source, folder.name, recorded, call.finish_reason))
    assert not wrong
    assert {"langgraph-openinference", "llamaindex", "semantic-kernel-default", "mastra"} <= set(checked)
