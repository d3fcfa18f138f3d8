"""The ground truth of smolagents managed agents, for the capture scripts that use them: a managed agent's call
(what the manager asked and got back) goes into the request run before the agent's own calls, and its model
calls (one per action step, planning off) count towards the request's. Needs smolagents in the environment."""

from __future__ import annotations

from typing import Any

from smolagents import ActionStep, ToolCallingAgent


def action_steps(agent: ToolCallingAgent) -> int:
    """Model calls of the agent's last run: one per action step (planning is off)."""
    return sum(isinstance(step, ActionStep) for step in agent.memory.steps)


class Ledger:
    """What the managed agents of the request being captured did: the scenario their calls go into, model
    calls per managed agent, and each one's own run in words for the scenario's note."""

    def __init__(self) -> None:
        self.scenario: Any = None
        self.counted: dict[str, int] = {}
        self.notes: list[str] = []

    def start(self, scenario: Any) -> None:
        self.scenario = scenario
        self.counted.clear()
        self.notes.clear()

    def model_calls(self) -> int:
        return sum(self.counted.values())


class Managed(ToolCallingAgent):
    """A managed agent that records its calls and model calls into a `Ledger`."""

    def __init__(self, *args: Any, ledger: Ledger, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ledger = ledger
        self.final_answer: Any = None

    def __call__(self, task: str, **kwargs: Any) -> Any:
        entry = {"name": self.name, "arguments": {"task": task, **kwargs}, "result": None, "error": False}
        self.ledger.scenario.runs[-1]["tool_calls"].append(entry)
        try:
            answer = super().__call__(task, **kwargs)
        except Exception:
            entry.update(error=True)
            self.ledger.notes.append(f"{self.name}: {action_steps(self)} model call(s), failed")
            raise
        finally:
            self.ledger.counted[self.name] = self.ledger.counted.get(self.name, 0) + action_steps(self)
        entry["result"] = str(answer)
        self.ledger.notes.append(f"{self.name}: {action_steps(self)} model call(s), answer {self.final_answer!r}")
        return answer

    def run(self, task: Any, *args: Any, **kwargs: Any) -> Any:
        self.final_answer = None
        out = super().run(task, *args, **kwargs)
        self.final_answer = out if isinstance(out, str) else getattr(out, "output", out)
        return out


def run_manager(manager: ToolCallingAgent, scenario: Any, ledger: Ledger, request: str) -> None:
    """Run the manager on one request and record the request run's ground truth: the manager's and every
    managed agent's model calls, the answer (None and `error` when the run raised), each managed agent's own
    run in the note."""
    scenario.run(manager.name, request)
    ledger.start(scenario)
    try:
        answer, status = manager.run(request), "ok"
    except Exception as exc:
        print(f"   run failed: {type(exc).__name__}: {str(exc)[:120]}")
        answer, status = None, "error"
    scenario.finish(answer, status, action_steps(manager) + ledger.model_calls())
    scenario.runs[-1].update(
        handoffs=[],
        nested_runs_allowed=True,
        note=f"The request run is {manager.name}'s with every managed agent's model and tool calls; {manager.name}: "
        f"{action_steps(manager)} model call(s). Each managed agent's own run is also reported, nested: "
        + "; ".join(ledger.notes)
        + ".",
    )
