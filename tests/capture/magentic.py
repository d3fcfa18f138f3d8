"""A Magentic-One orchestrator's scripted replies, for capture scripts of Magentic orchestrations (AutoGen's
`MagenticOneGroupChat`, Agent Framework's `MagenticBuilder`): the facts and the plan it starts with, a progress
ledger before each turn (a JSON object naming the next speaker and its instruction), then, once the ledger says
the request is satisfied, the final answer. Standard library only."""

from __future__ import annotations

import itertools
import json
from typing import Any

from client import text


def ledger(next_speaker: str, instruction: str = "", done: bool = False) -> dict[str, Any]:
    """The progress ledger: the floor to `next_speaker` with `instruction`, or (`done`) the request satisfied."""

    def entry(answer: object, reason: str) -> dict[str, Any]:
        return {"reason": reason, "answer": answer}

    return text(
        json.dumps(
            {
                "is_request_satisfied": entry(done, "the desks have answered" if done else "work remains"),
                "is_in_loop": entry(False, "each step is new"),
                "is_progress_being_made": entry(True, "the desks are acting"),
                "next_speaker": entry(next_speaker, "its desk handles this"),
                "instruction_or_question": entry(instruction or "Nothing more.", "the next step of the plan"),
            }
        )
    )


def planned(steps: list[dict[str, Any]], answer: str | None, idle_speaker: str) -> list[dict[str, Any]]:
    """The orchestrator's facts and plan, the steps (ledgers and the agents' replies), then, when `answer` is
    given, the ledger that declares the request satisfied (naming `idle_speaker`, unused) and the final answer."""
    head = [
        text("GIVEN FACTS: the customer's request. FACTS TO LOOK UP: the desk records."),
        text("- Ask the desk that owns the request to act on it, then report back to the customer."),
    ]
    return [*head, *steps, *([ledger(idle_speaker, done=True), text(answer)] if answer else [])]


def record_turns(truth: dict[str, Any], acted: list[str], manager: str, run: str, lead: str) -> None:
    """Complete the request run's ground truth from who made each model call (`acted`, `manager` for the
    orchestrator's own): a handoff wherever the floor passes from one agent to another (the orchestrator's
    instructions are not handoffs), and a note naming the `run` and the `lead`'s model calls."""
    turns = [name for name in acted if name != manager]
    truth.update(
        handoffs=[{"from": a, "to": b} for a, b in itertools.pairwise(turns) if a != b],
        nested_runs_allowed=True,
        note=f"The request run is {run}, with every model call made for it: the {lead} "
        f"(facts, plan, a progress ledger before each turn, the final answer) and each agent's; by whom: {acted}.",
    )
