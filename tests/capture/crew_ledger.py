"""CrewAI's own record of a crew's run, for the capture scripts of crews: model calls per agent role (its
LLMCallStartedEvent) and the delegations its coworker tools made (an after_tool_call hook), each a handoff of
the request run. Needs crewai in the environment."""

from __future__ import annotations

from collections import Counter
from typing import Any

from crewai.events import LLMCallStartedEvent, crewai_event_bus
from crewai.hooks import after_tool_call


class CrewLedger:
    """What the crew of the request being captured did: model calls per role, and what each delegation tool
    received and returned."""

    def __init__(self) -> None:
        self.llm_calls: Counter[str] = Counter()
        self.delegations: list[dict[str, Any]] = []
        self.request_run: dict[str, Any] = {}

    def start(self, request_run: dict[str, Any]) -> None:
        """Record into this request run from now on; its handoffs start empty."""
        self.request_run = request_run
        request_run["handoffs"] = []
        self.llm_calls.clear()
        self.delegations.clear()

    def settle(self) -> int:
        """Wait for CrewAI's event handlers, then the request's model calls."""
        crewai_event_bus.flush()
        return sum(self.llm_calls.values())

    def kickoff(
        self,
        scenario: Any,
        crew: Any,
        request: str,
        entry: str,
        delegator: str,
        lacks_if_failed: list[str] | None = None,
        lacks: list[str] | None = None,
    ) -> None:
        """Kick `crew` off on one request and record its ground truth into a new request run of `scenario`: the
        crew's answer, or the failure of a kickoff that raised; every agent's model calls; the delegations of
        `delegator` (its words for the note) as handoffs; what the trace lacks (`lacks`, and `lacks_if_failed`
        when the kickoff failed)."""
        request_run = scenario.run(entry, request)
        self.start(request_run)
        try:
            output, status = crew.kickoff(inputs={"request": request}).raw, "ok"
        except Exception as exc:
            print(f"   crew failed: {type(exc).__name__}: {exc}")
            output, status = None, "error"
        scenario.finish(output, status, self.settle(), lacks=lacks or (lacks_if_failed if status == "error" else None))
        request_run.update(
            nested_runs_allowed=True,
            note=f"The request run is the crew kickoff with every agent's model and tool calls; {delegator} "
            "delegation tool calls are handoffs. Model calls per agent: "
            + ", ".join(f"{role} {n}" for role, n in self.llm_calls.items())
            + ". Each agent's own run is also reported, nested: "
            + "; ".join(self.agent_runs(entry))
            + ".",
        )

    def agent_runs(self, entry: str) -> list[str]:
        """Each agent's own run in words, for the scenario's note: the entry agent's, then each coworker's."""
        return [f"{entry}: {self.llm_calls[entry]} model call(s), its answer is the request's"] + [
            f"{d['coworker']} (via {d['tool']}): input {d['task']!r}, {self.llm_calls[d['coworker']]} model call(s), "
            f"answer {d['result']!r}"
            for d in self.delegations
        ]


def watch() -> CrewLedger:
    """Hook a ledger onto CrewAI's event bus and tool hooks, once per capture script."""
    ledger = CrewLedger()

    @crewai_event_bus.on(LLMCallStartedEvent)
    def _count(source: Any, event: Any) -> None:
        ledger.llm_calls[event.agent_role] += 1

    @after_tool_call
    def _delegation(context: Any) -> None:
        """CrewAI's own delegation tools: record the transfer they made."""
        if context.tool_name.startswith(("delegate_work", "ask_question")):
            ledger.request_run["handoffs"].append({"from": context.agent.role, "to": context.tool_input["coworker"]})
            ledger.delegations.append({"tool": context.tool_name, **context.tool_input, "result": context.tool_result})

    return ledger
