"""What one dialect reads off a real capture's spans, beside the capture's ground truth."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from otelgrade.rebuild.dialects import classify
from otelgrade.rebuild.facts import LLMFacts, RunFacts, ToolFacts
from tests.captures import load_folder
from tests.paths import FIXTURES


@dataclass
class Read:
    """What `dialect` read off a capture's spans, what every dialect read, and the ground truth's runs."""

    llm: list[LLMFacts] = field(default_factory=list)
    tools: list[ToolFacts] = field(default_factory=list)
    runs: list[RunFacts] = field(default_factory=list)
    all_llm: int = 0
    all_tools: list[str] = field(default_factory=list)
    truth: list[dict[str, Any]] = field(default_factory=list)


def read_capture(source: str, dialect: str, root: str = "frameworks") -> Read:
    folder = FIXTURES / root / source
    expected = json.loads((folder / "expected.json").read_text())
    read = Read()
    for name, spec in sorted(expected["scenarios"].items()):
        read.truth += spec["runs"]
        for span in load_folder(folder / name)[0]:
            classified = classify(span)
            if classified is None:
                continue
            facts, own = classified.facts, classified.dialect == dialect
            if isinstance(facts, LLMFacts):
                read.all_llm += 1
                read.llm += [facts] if own else []
            elif isinstance(facts, ToolFacts):
                read.all_tools.append(facts.name)
                read.tools += [facts] if own else []
            elif isinstance(facts, RunFacts):
                read.all_llm += len(facts.calls)  # model calls recorded on the agent's span, no span each
                read.runs += [facts] if own else []
    return read


def assert_reads_the_ground_truth(read: Read, *, reads: str, model_call_spans: bool = True) -> None:
    """Every model and tool call the ground truth records is on a span some dialect reads, and this one reads
    what it owns (`reads`: any of `llm`, `tool`, `agent`) as the ground truth says it was."""
    assert not model_call_spans or read.all_llm >= sum(
        r["llm_calls"] for r in read.truth if isinstance(r.get("llm_calls"), int)
    )
    truth_tools = {c["name"] for r in read.truth for c in r["tool_calls"]}
    assert truth_tools <= set(read.all_tools), (truth_tools, read.all_tools)
    if "llm" in reads:
        assert read.llm and any(call.model for call in read.llm)
    if "tool" in reads:
        assert {t.name for t in read.tools} & truth_tools  # it reads executions of the tools the agents called
    if "agent" in reads:
        truth_agents = {r["agent_name"] for r in read.truth if r.get("agent_name")}
        assert truth_agents & {r.agent_name for r in read.runs}, (truth_agents, [r.agent_name for r in read.runs])
