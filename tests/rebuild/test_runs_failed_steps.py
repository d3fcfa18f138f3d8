"""Runs whose steps failed: a call its step raised on failed, and an agent that step called, whose own spans never
arrived, is part of the run that called it (real OTel SDK spans, OpenInference's step shape)."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.rebuild.test_handoffs import _oi, _otlp

ASK = "llm__output_messages__0__message__tool_calls__0__tool_call__function__name"
SAY = "llm__output_messages__0__message__content"


def _llm(tracer: Any, question: str, **output: str) -> None:
    _oi(
        tracer,
        "OpenAIModel.generate",
        "LLM",
        llm__model_name="gpt-4o",
        llm__input_messages__0__message__role="user",
        llm__input_messages__0__message__content=question,
        llm__output_messages__0__message__role="assistant",
        **output,
    ).end()


def _failed_step(tracer: Any, lose_agents: bool) -> None:
    """A coordinator's first step asks for `researcher` (a managed agent) and raises while running it; its second
    step answers. With `lose_agents`, the coordinator's and the researcher's own spans never end (never exported):
    only their steps arrive, the researcher's inside the coordinator's failing step."""
    coordinator = _oi(tracer, "coordinator", "AGENT")
    with trace.use_span(coordinator, end_on_exit=not lose_agents):
        step = _oi(tracer, "Step 1", "CHAIN")
        with trace.use_span(step, end_on_exit=True):
            _llm(tracer, "Find a hotel in Lisbon.", **{ASK: "researcher"})
            if lose_agents:
                with (
                    trace.use_span(_oi(tracer, "researcher", "AGENT"), end_on_exit=False),
                    trace.use_span(_oi(tracer, "Step 1", "CHAIN"), end_on_exit=True),
                ):
                    _llm(tracer, "Hotels in Lisbon?", **{ASK: "find_hotels"})
                    _oi(tracer, "find_hotels", "TOOL", tool__name="find_hotels", output__value="H-77").end()
            step.set_status(Status(StatusCode.ERROR, "AgentToolExecutionError: researcher failed"))
        with trace.use_span(_oi(tracer, "Step 2", "CHAIN"), end_on_exit=True):
            _llm(tracer, "Find a hotel in Lisbon.", **{SAY: "The research desk is unavailable."})


def test_a_call_whose_step_raised_while_running_it_failed() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _failed_step(t, lose_agents=False))).spans)
    (run,) = runs
    assert [(t.name, t.error) for t in run.tool_calls] == [("researcher", True)]
    assert not run.disagreements  # asked for and failed: not a call that was never run


def test_an_agent_whose_spans_never_arrived_inside_a_failing_step_is_part_of_the_run_that_called_it() -> None:
    runs = rebuild(decode_traces(_otlp(lambda t: _failed_step(t, lose_agents=True))).spans)
    requests = [r for r in runs if r.parent_span_id is None]
    assert len(requests) == 1  # not the researcher's stretch as a request of its own
    (request,) = requests
    assert len(request.llm_calls) == 3
    assert [(t.name, t.error) for t in request.tool_calls] == [("researcher", True), ("find_hotels", False)]
