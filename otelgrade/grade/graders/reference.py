"""The grader reference (`docs/graders.md`), written from the grader registry.

    python -m otelgrade.grade.graders.reference docs/graders.md     # rewrite it
    python -m otelgrade.grade.graders.reference                     # print it

It registers nothing, so the package does not import it.

Every registered grader type gets its names (canonical, other spellings, deprecated ones), who owns it, what
it checks (its docstring), its parameters with their types and defaults, what part of a run it reads, the
scopes it grades in, and an example block (from `EXAMPLES`, else the bare type).
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from otelgrade.core.settings import JudgeControls
from otelgrade.grade.graders.base import GRADER_TYPES, GraderType, list_graders
from otelgrade.grade.graders.multiturn import CONVERSATION_ONLY
from otelgrade.grade.graders.names import owner

EXAMPLES: dict[str, dict[str, Any]] = {
    "agent_judge": {"prompt": "Did the agent book the flight the user asked for? {trajectory}", "sample": 0.1},
    "rubric": {"prompt_path": "helpful.txt", "sample": 0.05},
    "trajectory_judge": {"prompt": "Were the steps sensible? {trajectory}"},
    "all_of": {"graders": [{"type": "tools_called", "tools": ["search"]}, {"type": "no_loops"}]},
    "any_of": {
        "graders": [{"type": "output_contains", "values": ["booked"]}, {"type": "tools_called", "tools": ["book"]}]
    },
    "not": {"grader": {"type": "tools_called", "tools": ["delete_account"]}},
    "threshold": {"grader": {"type": "potato.edit_distance", "ground_truth": "Booked."}, "min_score": 0.8},
    "per_turn": {
        "turns": [[{"type": "tools_called", "tools": ["search"]}], [{"type": "tools_called", "tools": ["book"]}]]
    },
    "arguments_contain": {"scope": "tool_call", "where": {"tool": "^search_"}, "text": "SFO"},
    "arguments_match": {
        "scope": "tool_call",
        "where": {"tool": "book_flight"},
        "pattern": '"flight_id": "[A-Z]{2}\\d+"',
    },
    "arguments_schema": {
        "scope": "tool_call",
        "where": {"tool": "charge_card"},
        "schema": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}},
    },
    "tool_succeeded": {"scope": "tool_call"},
    "finish_reason": {"scope": "llm_call"},
    "context_growth": {"max_ratio": 8},
    "cost_budget": {"max": 0.05},
    "duration": {"max": "30s"},
    "token_budget": {"max_total": 20000},
    "no_loops": {"max_repeats": 2, "window": 10},
    "tool_error_rate": {"max": 0.2},
    "output_contains": {"values": ["booked"]},
    "output_not_contains": {"values": ["sorry"]},
    "output_equals": {"expected": "Booked."},
    "output_matches": {"pattern": "[A-Z]{3}\\d{6}"},
    "tools_called": {"tools": ["search_flights", "book_flight"]},
    "tools_not_called": {"tools": ["delete_account"]},
    "tool_call_order": {"tools": ["search_flights", "book_flight"]},
    "max_steps": {"max": 20},
    "max_tool_calls": {"max": 10},
    "max_llm_calls": {"max": 10, "count": "own_agent"},
    "max_turns": {"max": 8},
    "evaldeck.contains": {"values": ["booked"]},
    "evaldeck.not_contains": {"values": ["sorry"]},
    "evaldeck.equals": {"expected": "Booked."},
    "evaldeck.regex": {"pattern": "[A-Z]{3}\\d{6}"},
    "evaldeck.tool_called": {"required": ["search_flights"]},
    "evaldeck.tool_not_called": {"forbidden": ["delete_account"]},
    "evaldeck.tool_order": {"expected_order": ["search_flights", "book_flight"]},
    "evaldeck.max_steps": {"max_steps": 20},
    "evaldeck.max_tool_calls": {"max_tool_calls": 10},
    "evaldeck.max_llm_calls": {"max_llm_calls": 10},
    "evaldeck.expected": {"expected": {"tools_called": ["book_flight"], "max_steps": 10}},
    "letta.tool": {"function": "exact_match", "extractor": "last_assistant", "ground_truth": "Booked."},
    "letta.contains": {"ground_truth": "booked"},
    "letta.exact_match": {"extractor": "after_marker", "extractor_config": {"marker": "ANSWER:"}},
    "letta.regex_match": {"ground_truth": "[A-Z]{3}\\d{6}"},
    "potato.contains": {"substring": "booked"},
    "potato.exact_match": {"ground_truth": "Booked.", "case_sensitive": False},
    "potato.regex_match": {"pattern": "[A-Z]{3}\\d{6}"},
    "potato.json_schema_match": {"schema": {"type": "object", "required": ["flight_id"]}},
    "potato.tool_use": {"expected_tool": "book_flight", "expected_args": {"origin": "SFO"}},
    "potato.trajectory_match": {"mode": "superset"},
    "vally.tool-calls": {"required": ["^search_flights$"], "disallowed": ["^cancel_"]},
    "vally.output-contains": {"substring": "booked"},
    "vally.output-not-contains": {"substring": "sorry"},
    "vally.output-matches": {"pattern": "(?i)booked"},
    "vally.output-not-matches": {"pattern": "(?i)sorry"},
    "vally.transcript-contains": {"substring": "Oslo"},
    "vally.transcript-not-contains": {"substring": "sorry"},
    "vally.tool-call-count": {"max": 10},
    "vally.turn-count": {"max": 10},
    "vally.token-budget": {"max": 20000},
    "vally.error-count": {"max": 0},
    "vally.wall-time": {"max": 60},
    "vally.skill-invocation": {"required": ["book_flight"]},
    "vally.max-repeat": {"max": 3, "match": "name-args"},
}
"""An example block's keys besides `type`, per grader type that needs (or shows best with) some."""

_SYSTEM_NOTES = {
    "letta-evals": "letta-evals' semantics; also written `{kind: tool, function: ...}` in a letta-evals block.",
    "evaldeck": "evaldeck's semantics; also implied by an evaldeck `expected:` block.",
    "Potato": "Potato's semantics; also written `{name: ..., params: {...}}` as in a Potato config.",
    "vally": "vally's semantics; also written `{type: <vally name>, config: {...}}` as in a vally eval spec.",
}


def example(type_name: str) -> dict[str, Any]:
    """A grader block using this type."""
    return {"type": type_name, **EXAMPLES.get(type_name, {})}


def _flow(value: Any) -> str:
    """A YAML flow value: JSON, with plain keys and plain one-word strings."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    plain = isinstance(value, str) and value.replace("_", "").replace("-", "").replace(".", "").isalnum()
    return value if plain and yaml.safe_load(value) == value else json.dumps(value)


def _parameters(entry: GraderType) -> list[str]:
    rows = []
    for p in inspect.signature(entry.factory).parameters.values():
        if p.name.startswith("_"):
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            keys = ", ".join(f"`{k}`" for k in JudgeControls.model_fields)
            rows.append(f"| and every judge key | {keys} | |")
            continue
        kind = str(p.annotation) if p.annotation is not inspect.Parameter.empty else "any"
        kind = re.sub(r"^Annotated\[(.+), Field\((.*)\)\]$", r"\1 (\2)", kind)
        default = "required" if p.default is inspect.Parameter.empty else f"`{_flow(p.default)}`"
        rows.append(f"| `{p.name}` | `{kind.replace('|', '&#124;')}` | {default} |")
    return rows


def _reads(entry: GraderType) -> str:
    parts = sorted(entry.parts_read({}))
    if {"graders", "grader", "turns"} & set(entry.parameters):
        return "what the graders it holds read (each skips a run whose trace lacks it)"
    if str(inspect.signature(entry.factory).return_annotation) in ("Judge", "Judgement"):
        also = f" and {', '.join(f'`{p}`' for p in parts)}" if parts else ""
        return f"what its prompt's placeholders show the model{also} (a run whose trace lacks it is `skipped`)"
    if callable(entry.reads):
        shown = ", ".join(f"`{p}`" for p in parts) or "nothing beyond the run's structure"
        return f"depends on its parameters (with their defaults: {shown})"
    return ", ".join(f"`{p}`" for p in parts) if parts else "the run's structure only (names, counts, status, timing)"


def _grades(entry: GraderType) -> str:
    if entry.name in CONVERSATION_ONLY:
        return "whole conversations only (in a `level: conversation` suite)"
    return ", ".join("whole runs" if s == "run" else f"each {s.replace('_', ' ')}" for s in entry.scopes)


def _section(entry: GraderType) -> list[str]:
    who = owner(entry.name)
    lines = [f"### `{entry.name}`", ""]
    facts = [f"- owner: {who}" + (f" ({_SYSTEM_NOTES[who]})" if who in _SYSTEM_NOTES else "")]
    if entry.aliases:
        facts.append("- also answers to: " + ", ".join(f"`{a}`" for a in entry.aliases))
    if entry.deprecated:
        facts.append("- deprecated spellings (load with a warning): " + ", ".join(f"`{d}`" for d in entry.deprecated))
    facts.append(f"- reads: {_reads(entry)}")
    facts.append("- grades: " + _grades(entry))
    lines += [" ".join(entry.doc.split()) or "(no description)", "", *facts, ""]
    params = _parameters(entry)
    if params:
        lines += ["| parameter | type | default |", "|---|---|---|", *params, ""]
    lines += [
        "```yaml",
        f"- {_flow({'name': entry.name.split('.')[-1].replace('-', '_'), **example(entry.name)})}",
        "```",
        "",
    ]
    return lines


def render() -> str:
    """The whole reference, otelgrade's own grader types first, then each reference system's."""
    names = sorted(list_graders(), key=lambda n: (owner(n) != "otelgrade", owner(n), n))
    entries = [GRADER_TYPES.get(n) for n in names if GRADER_TYPES.get(n).factory.__module__.startswith("otelgrade.")]
    out = [
        "# Grader reference",
        "",
        "<!-- Generated from the grader registry by `python -m otelgrade.grade.graders.reference docs/graders.md`;"
        " do not edit by hand. -->",
        "",
        f"{len(entries)} grader types. An unprefixed name is otelgrade's own grader; `letta.`, `evaldeck.`, "
        "`potato.` and `vally.` name a reference system's grader with that system's semantics (see the README, "
        "*Grader names*). Every block also takes `name`, `threshold` (re-judge the score at this value), and, "
        "where the type grades single calls, `scope` and `where`.",
        "",
        "| type | owner | deprecated spellings |",
        "|---|---|---|",
        *(f"| [`{e.name}`](#{_anchor(e.name)}) | {owner(e.name)} | {', '.join(e.deprecated)} |" for e in entries),
        "",
    ]
    for entry in entries:
        out += _section(entry)
    return "\n".join(out).rstrip("\n") + "\n"


def _anchor(name: str) -> str:
    """The anchor GitHub gives a `### `name`` heading."""
    return "".join(c for c in name.lower() if c.isalnum() or c in "-_")


def main(argv: list[str]) -> int:
    text = render()
    if argv:
        Path(argv[0]).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
