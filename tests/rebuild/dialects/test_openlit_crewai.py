"""CrewAI under OpenLIT: each agent's turn runs in CrewAI's executor flow, written as `invoke_workflow <flow>` with
a span per flow method (`invoke_agent <method>`, no agent name); a delegation's coworker runs its flow inside the
delegation tool's span, named only by the tool's arguments; the coworker's own tools leave no span. Real SDK spans
in the shapes `openlit.instrumentation.crewai` and `.openai` write them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild

ASK, TASK = "Please close my account, user 42.", "Delete the account of user 42."


def _parts(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def _asks(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return _parts("assistant", {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})


def _told(call_id: str, result: str) -> dict[str, Any]:
    return _parts("tool", {"type": "tool_call_response", "id": call_id, "response": result})


class _Crew:
    def __init__(self, provider: TracerProvider) -> None:
        self.crewai = provider.get_tracer("openlit.instrumentation.crewai")
        self.openai = provider.get_tracer("openlit.instrumentation.openai")

    def span(self, name: str, **attributes: Any) -> Any:
        span = self.crewai.start_span(name, attributes={"telemetry.sdk.name": "openlit", **attributes})
        return trace.use_span(span, end_on_exit=True)

    @contextmanager
    def flow(self) -> Iterator[None]:
        """The executor flow an agent's turn runs in: a method of it, then the turn's work."""
        with self.span("invoke_workflow AgentExecutor", **{"gen_ai.operation.name": "invoke_workflow"}):
            with self.span("invoke_agent initialize_reasoning", **{"gen_ai.operation.name": "invoke_agent"}):
                pass
            yield

    def chat(self, inputs: list[dict[str, Any]], output: dict[str, Any] | None) -> None:
        with self.openai.start_as_current_span("chat gpt-4o-mini", record_exception=False) as s:
            s.set_attribute("telemetry.sdk.name", "openlit")
            s.set_attribute("gen_ai.operation.name", "chat")
            if output is None:  # a failed call records no messages
                s.set_status(trace.Status(trace.StatusCode.ERROR, "InternalServerError: model backend unavailable"))
            else:
                s.set_attribute("gen_ai.input.messages", json.dumps(inputs))
                s.set_attribute("gen_ai.output.messages", json.dumps([output]))


def _delegation(clerk_fails: bool) -> list[Trajectory]:
    """A lead delegates to `customs_clerk`, which deletes an account (or whose model, then the lead's, fails)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "freight-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    crew = _Crew(provider)
    lead_asked, clerk_asked = [_parts("user", _text(ASK))], [_parts("user", _text(TASK))]
    delegate = {"task": TASK, "coworker": "customs_clerk"}
    with (
        crew.span(
            "invoke_workflow crew", **{"gen_ai.operation.name": "invoke_workflow", "gen_ai.crewai.crew.agents": "[]"}
        ),
        crew.span(
            "invoke_agent dispatch_lead",
            **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "dispatch_lead"},
        ),
        crew.flow(),
    ):
        crew.chat(lead_asked, _asks("c1", "Delegate work to coworker", delegate))
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Delegate work to coworker"}
        with (
            crew.span(
                "execute_tool Delegate work to coworker", **tool, **{"gen_ai.tool.call.arguments": json.dumps(delegate)}
            ),
            crew.flow(),
        ):
            crew.chat(clerk_asked, _asks("c2", "delete_account", {"user_id": "42"}))
            crew.chat(
                [*clerk_asked, _told("c2", "account 42 deleted")],
                None if clerk_fails else _parts("assistant", _text("Account 42 deleted.")),
            )
        told = [*lead_asked, _told("c1", "Account 42 deleted.")]
        crew.chat(told, None if clerk_fails else _parts("assistant", _text("Closed.")))  # the lead's model fails too
    provider.shutdown()
    runs = rebuild(decode_traces(encode_spans(exporter.get_finished_spans()).SerializeToString()).spans)
    return [r for r in runs if r.parent_span_id is None]


def test_the_executor_flows_are_steps_and_the_coworker_is_the_delegations_agent() -> None:
    """One request: the lead's, holding the coworker's delete; the delegation a handoff to the coworker the tool's
    arguments name (no `AgentExecutor` agent, no flow method as a run); the coworker's delete, answered to its own
    next model call, is its tool call, not a hand back."""
    (request,) = _delegation(clerk_fails=False)
    assert (request.agent_name, len(request.llm_calls), request.output) == ("dispatch_lead", 4, "Closed.")
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("dispatch_lead", "customs_clerk")]
    assert [t.name for t in request.tool_calls] == ["delete_account"]


def test_a_coworker_whose_model_failed_after_its_tool_hands_nothing_back() -> None:
    """Its next model call failed: it carried on after the tool, so the tool was no transfer to the lead."""
    (request,) = _delegation(clerk_fails=True)
    assert [(h.from_agent, h.to_agent) for h in request.handoffs] == [("dispatch_lead", "customs_clerk")]
    assert [t.name for t in request.tool_calls] == ["delete_account"] and request.status == "error"
