"""A Strands Agents `Swarm` request for capture scripts (needs strands-agents): each agent's model calls counted by
its own hook, and the request run's ground truth from the swarm's own events."""

from __future__ import annotations

from collections import Counter
from typing import Any

from client import Scenario
from strands import Agent
from strands.hooks import BeforeModelCallEvent
from strands.multiagent import Swarm


def counted(agent: Agent, calls: Counter[str]) -> Agent:
    """`agent`, counting its model calls into `calls[agent.name]` (the agent's own hook, not the spans)."""

    def count(event: BeforeModelCallEvent) -> None:
        calls[agent.name] += 1

    agent.hooks.add_callback(BeforeModelCallEvent, count)
    return agent


async def serve_swarm(s: Scenario, swarm: Swarm, entry: str, request: str, calls: Counter[str]) -> None:
    """Run `request` through `swarm` (entered at `entry`, its agents `counted` into `calls`) and record the request
    run: the last agent's answer, or status error with no answer when an agent failed, every agent's model calls,
    and the handoffs from the swarm's handoff events."""
    truth = s.run(entry, request)
    calls.clear()
    handoffs: list[dict[str, str]] = []
    result: Any = None
    async for event in swarm.stream_async(request):
        if event.get("type") == "multiagent_handoff":
            handoffs += [{"from": a, "to": b} for a in event["from_node_ids"] for b in event["to_node_ids"]]
        elif event.get("type") == "multiagent_result":
            result = event["result"]
    history = [node.node_id for node in result.node_history]
    if result.status.value == "completed":
        last = result.results[history[-1]].result
        output, status = "".join(block["text"] for block in last.message["content"] if "text" in block), "ok"
    else:  # a node failed: the swarm reports it failed, with no answer
        print(f"   swarm {result.status.value}: {[(n, str(r.result)[:80]) for n, r in result.results.items()]}")
        output, status = None, "error"
    s.finish(output, status, sum(calls.values()))
    truth.update(
        handoffs=handoffs,
        nested_runs_allowed=True,
        note="The request run is the swarm's, with every agent's model and tool calls; model calls per agent: "
        + ", ".join(f"{name} {n}" for name, n in calls.items())
        + f"; the agents that completed their turn: {history}.",
    )
