"""Structure comes from what a trace shows, not from the names it uses.

Every capture (the same folders the replay tests walk) is rebuilt twice: as captured, with the frameworks' names
as hints; and with every tool and agent name renamed consistently to opaque words (span names, attributes, events,
log records, the JSON inside them, arguments and messages), with the name hints off. Both give the same runs, the
same parents, the same tool calls (step, witnesses, failure) and the same handoffs (step, from, to, renamed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from otelgrade.core.spans import Event, LogEvent, Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.rebuild import transfers
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import requested_calls
from tests.captures import load_folder, rebuild_folder, rebuild_traces
from tests.e2e.test_rebuild_captures import ROOTS

# Attributes whose values name a tool or an agent, in the conventions' words.
_NAME_KEYS = (
    "gen_ai.tool.name",
    "gen_ai.agent.name",
    "tool.name",
    "agent.name",
    "graph.node.id",
    "traceloop.entity.name",
)
# Words that are the frameworks' own, not names an application gave: graph plumbing, ADK's bookkeeping span,
# DSPy's `ReAct` module (whose span the reader knows by it), LiteLLM's span of each raw provider request.
_COMMON = frozenset({"tools", "agent", "__start__", "__end__", "(merged tools)", "ReAct", "raw_gen_ai_request"})
# A run rooted at its first model call is named after that span, `<operation> <model>`: the instrumentation's words.
_MODEL_CALL_SPAN = re.compile(rf"^(?:{'|'.join(sorted(genai.LLM_OPERATIONS))}) ")


def _names(expected: dict[str, Any], spans: list[Span], runs: list[Trajectory]) -> set[str]:
    """The tool and agent names the ground truth, the spans and the model's requests give."""
    found: set[str] = set()
    for run in runs:
        found.add("" if _MODEL_CALL_SPAN.match(run.agent_name or "") else run.agent_name or "")
        found.update(t.name for t in run.tool_calls)
        found.update(c.name for call in run.llm_calls for c in requested_calls(call.output_messages))
    for spec in expected["scenarios"].values():
        for run in spec["runs"]:
            found.add(run.get("agent_name") or "")
            found.update(t["name"] for t in run.get("tool_calls") or ())
            found.update(h.get(end) or "" for h in run.get("handoffs") or () for end in ("from", "to"))
    for span in spans:  # OpenLIT joins the names of a response's calls with commas
        found.update(
            n.strip() for k in _NAME_KEYS if isinstance(v := span.attributes.get(k), str) for n in v.split(",")
        )
    return {n for n in found if len(n) >= 4 and n not in _COMMON}


def _renamer(names: set[str]) -> Callable[[str], str]:
    """Each name to an opaque word; the spellings of one name (`Delegate work to coworker`,
    `delegate_work_to_coworker`) to the same word."""
    ordered = sorted(names, key=lambda n: (-len(n), n))
    words = {key: f"zq{i:02d}x" for i, key in enumerate(dict.fromkeys(map(_spelling, ordered)))}
    table = {n: words[_spelling(n)] for n in ordered}
    pattern = re.compile("|".join(re.escape(n) for n in ordered))
    return lambda text: pattern.sub(lambda m: table[m.group(0)], text) if ordered else text


def _spelling(name: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", name.lower()))


def _value(value: Any, rename: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, list | tuple):
        return [_value(v, rename) for v in value]
    if isinstance(value, dict):
        return {k: _value(v, rename) for k, v in value.items()}
    return value


def _event(event: Event, rename: Callable[[str], str]) -> Event:
    return Event(rename(event.name), event.time_ns, _value(event.attributes, rename), _value(event.body, rename))


def _renamed(
    spans: list[Span], logs: list[LogEvent], rename: Callable[[str], str]
) -> tuple[list[Span], list[LogEvent]]:
    return (
        [
            replace(
                s,
                name=rename(s.name),
                status_message=rename(s.status_message),
                attributes=_value(s.attributes, rename),
                events=[_event(e, rename) for e in s.events],
            )
            for s in spans
        ],
        [replace(log, event=_event(log.event, rename)) for log in logs],
    )


def _shape(runs: list[Trajectory], rename: Callable[[str], str]) -> dict[str, Any]:
    """Each run by its root span: parent, status, agent, model calls, tool calls and handoffs, names renamed."""

    def name(value: str | None) -> str | None:
        return rename(value) if value else value

    return {
        run.span_id: {
            "parent": run.parent_span_id,
            "status": run.status,
            "agent": name(run.agent_name),
            "llm_calls": len(run.llm_calls),
            "tool_calls": [(t.step, t.witnesses, t.error) for t in run.tool_calls],
            "handoffs": [(h.step, name(h.from_agent), name(h.to_agent)) for h in run.handoffs],
        }
        for run in runs
    }


def _captures() -> Iterator[Any]:
    for root in ROOTS:
        for expected_file in sorted(root.glob("*/expected.json")):
            yield pytest.param(expected_file, id=f"{root.name}/{expected_file.parent.name}")


@pytest.fixture
def hints_off() -> Iterator[None]:
    transfers.NAME_HINTS = False
    try:
        yield
    finally:
        transfers.NAME_HINTS = True


@pytest.mark.parametrize("expected_file", list(_captures()))
def test_a_consistent_rename_keeps_the_structure(expected_file: Path, hints_off: None) -> None:
    expected = json.loads(expected_file.read_text())
    folders = [folder for name in sorted(expected["scenarios"]) if (folder := expected_file.parent / name).is_dir()]
    loaded = {folder: load_folder(folder) for folder in folders}
    spans = [s for found, _ in loaded.values() for s in found]
    rename = _renamer(_names(expected, spans, [t for folder in folders for t in rebuild_folder(folder)]))
    for folder, (spans, logs) in loaded.items():
        transfers.NAME_HINTS = True
        as_captured = _shape(rebuild_folder(folder), rename)
        transfers.NAME_HINTS = False
        blind = _shape(rebuild_traces(*_renamed(spans, logs, rename)), lambda text: text)
        changed = {sid: (run, blind.get(sid)) for sid, run in as_captured.items() if blind.get(sid) != run}
        assert not changed and blind.keys() == as_captured.keys(), (folder.name, changed)
