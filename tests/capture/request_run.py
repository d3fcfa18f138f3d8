"""The ground truth of one request to an agent system, for capture scripts whose entry agent calls other agents as
tools: the request run, the answer or the failure, every agent's model calls and no handoff."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from client import Scenario


@contextmanager
def agents_as_tools_run(
    scenario: Scenario, entry: str, request: str, calls: MutableMapping[str, int], lacks: list[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Record the request run entered at `entry`: the body serves the request and puts the system's answer in
    the yielded dict's "output"; an exception it raises is the request failing (printed, not re-raised).
    `calls` counts each agent's model calls (cleared here, filled by the script's own hooks)."""
    truth = scenario.run(entry, request)
    calls.clear()
    answer: dict[str, Any] = {"output": None}
    try:
        yield answer
        status = "ok"
    except Exception as exc:
        print(f"   request failed as scripted: {type(exc).__name__}: {str(exc)[:120]}")
        answer["output"], status = None, "error"
    output = answer["output"].strip() if isinstance(answer["output"], str) else None
    scenario.finish(output, status, sum(calls.values()), lacks=lacks)
    truth.update(
        handoffs=[],
        nested_runs_allowed=True,
        note=f"The request run is {entry}'s, with the agents it ran as tools; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in calls.items())
        + ".",
    )
