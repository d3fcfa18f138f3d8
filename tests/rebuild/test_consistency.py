"""Where a run's witnesses disagree with no rule to reconcile them, the run lacks what is uncertain: safety graders
answer `skipped` with the reason, never `pass`, the disagreement is counted in
`otelgrade_runs_inconsistent_total{reason}`, and `otelgrade inspect` and the run page show it. A placeholder answer
is no answer. Traces made by the real OpenTelemetry SDK (`test_witnesses.py`'s builders)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import UiSettings
from otelgrade.export.ui import RunStore
from otelgrade.grade.conversations import merge
from otelgrade.grade.graders.base import build_grader, grade_safely
from otelgrade.intake.decode import decode_traces
from otelgrade.rebuild import rebuild
from tests.export.ui.test_pages import _get
from tests.rebuild.test_handoffs import QUESTION, _otlp
from tests.rebuild.test_rebuild import _chat, parts_calls, parts_user
from tests.rebuild.test_witnesses import agent, asks, chat, execute, graded, otlp, says, the_run, told, user

# --- consistency: model calls that asked for tools none shows -------------------------------------


def deleted_quietly(app: Tracer, server: Tracer) -> None:
    """Content capture off and no tool span: the model asked for a tool (its finish reason says so), something
    ran it, nothing on the trace shows which."""
    with agent(app):
        chat(app, None, None, "tool_calls", (120, 20))
        chat(app, None, None, "stop", (160, 30))


def test_a_response_that_ended_for_tool_calls_none_shows_is_never_passed(tmp_path: Path) -> None:
    metrics = Metrics()
    got = graded(deleted_quietly, metrics)
    assert got["safe"].outcome == "skipped" and got["budget"].outcome == "skipped"
    assert "finish_reason_without_calls" in got["safe"].rationale and "step 1" in got["safe"].rationale
    value = metrics.registry.get_sample_value
    assert value("otelgrade_runs_inconsistent_total", {"reason": "finish_reason_without_calls"}) == 1
    trace_file = tmp_path / "trace.pb"
    trace_file.write_bytes(otlp(deleted_quietly))
    shown = subprocess.run(
        [sys.executable, "-m", "otelgrade", "inspect", str(trace_file)], capture_output=True, text=True, timeout=60
    )
    assert "witnesses disagree: finish_reason_without_calls" in shown.stdout, shown.stdout + shown.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "otelgrade", "trajectories", "--format", "text", str(trace_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "witnesses disagree: finish_reason_without_calls: model call(s) at step 1" in listed.stdout


def test_a_conversation_with_such_a_turn_is_skipped_for_the_same_reason() -> None:
    def answered(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [says("It ships Monday.")], "stop")

    conversation = merge([the_run(answered), the_run(deleted_quietly)], "conv-1")
    grader = build_grader("tools_not_called", {"tools": ["delete_account"]})
    verdict = grade_safely(grader, conversation)
    assert not isinstance(verdict, Future) and verdict.outcome == "skipped"
    assert "finish_reason_without_calls" in verdict.rationale


def test_the_run_page_shows_the_disagreement() -> None:
    run = the_run(deleted_quietly)
    store = RunStore(keep=5)
    store.add_run(run)
    ((status, page, _),) = asyncio.run(_get(store, UiSettings(), f"/runs/{run.trace_id}"))
    assert status == 200
    assert "witnesses disagree" in page and "finish_reason_without_calls" in page
    assert "ended for tool calls" in page and "never pass" in page
    # content capture off explains the content it lacks, not the tool calls its witnesses leave uncertain
    assert "does not carry: input, output, messages, tool_arguments, tool_results." in page


def test_a_model_call_continuing_its_conversation_with_no_call_seen_leaves_tool_calls_uncertain() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, None, None, None, (120, 20))  # no finish reason recorded
            chat(app, None, None, None, (160, 30))  # its input holds the first call's and more: a tool answered

    run = the_run(build)
    assert "tool_calls" in run.lacks
    assert [d.reason for d in run.disagreements] == ["continued_without_calls"]
    assert graded(build)["safe"].outcome == "skipped"


def test_calls_that_finished_and_a_fresh_conversation_are_no_disagreement() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, None, None, "stop", (120, 20))
            chat(app, None, None, None, (60, 30))  # smaller than the first exchange: no continuation

    run = the_run(build)
    assert not run.disagreements and "tool_calls" not in run.lacks
    assert graded(build)["safe"].outcome == "pass"


def test_executions_the_model_never_asked_for_beside_its_requests_leave_tool_calls_uncertain() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1", "shipped"):
                pass
            with execute(app, "close_ticket", None, "closed"):  # no model response asked for it
                pass
            chat(app, [user(), asks(("c1", "lookup_order")), told("c1", "shipped")], [says("Shipped.")], "stop")

    budget = graded(build)["budget"]
    assert budget.outcome == "skipped" and "requested_vs_executed" in budget.rationale
    run = the_run(build)
    assert [d.reason for d in run.disagreements] == ["requested_vs_executed"]
    assert "close_ticket" in run.disagreements[0].detail


def test_a_handoff_to_an_agent_that_never_acts_leaves_the_request_s_tool_calls_uncertain() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()], [asks(("c1", "transfer_to_refunds"))], "tool_calls")
            with execute(app, "transfer_to_refunds", "c1", "done"):
                pass
            chat(app, [user(), asks(("c1", "transfer_to_refunds")), told("c1", "done")], [says("Done.")], "stop")

    assert graded(build)["budget"].outcome == "skipped"
    run = the_run(build)
    assert [(h.from_agent, h.to_agent) for h in run.handoffs] == [("support", "refunds")]
    assert [d.reason for d in run.disagreements] == ["handoff_target_idle"]


# --- placeholders are no answer ------------------------------------------------------------------


@pytest.mark.parametrize("placeholder", ["None", "undefined"])
def test_a_placeholder_answer_gives_way_to_the_last_model_output(placeholder: str) -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app, answer=placeholder):
            chat(app, [user()], [says("Order A1 ships on Monday.")], "stop")

    run = the_run(build)
    assert run.output == "Order A1 ships on Monday." and "output" not in run.lacks


def test_a_placeholder_answer_with_no_model_text_is_a_lacking_output() -> None:
    def build(app: Tracer, server: Tracer) -> None:
        with agent(app, answer="null"):
            chat(app, [user()], [asks(("c1", "lookup_order"))], "tool_calls")
            with execute(app, "lookup_order", "c1", "shipped"):
                pass

    run = the_run(build)
    assert run.output is None and "output" in run.lacks
    assert [d.reason for d in run.disagreements] == ["placeholder_output"]


def _ends_on_a_call(content: bool) -> Any:
    """The model asks for a lookup, then for `wrap_up`, and the run ends on `wrap_up`'s execution, no model call
    after it (a framework's own call that ends the loop looks the same as a tool). `content` False: capture off."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            chat(app, [user()] if content else None, [asks(("c1", "lookup"))] if content else None, "tool_calls")
            with execute(app, "lookup", "c1", "found" if content else None):
                pass
            chat(app, [user()] if content else None, [asks(("c2", "wrap_up"))] if content else None, "tool_calls")
            with execute(app, "wrap_up", "c2", "sent" if content else None):
                pass

    return build


def test_a_run_ending_on_a_call_no_model_saw_with_content_off_leaves_tool_calls_uncertain() -> None:
    got = graded(_ends_on_a_call(content=False))
    assert got["budget"].outcome == "skipped" and "ended_on_unanswered_call" in got["budget"].rationale
    assert got["safe"].outcome == "skipped"
    run = the_run(_ends_on_a_call(content=True))  # its result recorded: a tool, no doubt
    assert [t.name for t in run.tool_calls] == ["lookup", "wrap_up"] and "tool_calls" not in run.lacks


def test_a_tool_asked_for_by_a_response_no_model_call_shows_leaves_the_model_calls_lacking() -> None:
    """One span per agent records only its last model call (the response that asked for the tool is replayed in
    its input, and left in its recorded output beside the answer): the run cannot say how many model calls were
    made, nor the conversation."""

    def build(app: Tracer, server: Tracer) -> None:
        with agent(app):
            with execute(app, "lookup_order", "c1", "shipped"):
                pass
            replayed = [user(), asks(("c1", "lookup_order")), told("c1", "shipped")]
            chat(app, replayed, [asks(("c1", "lookup_order")), says("Shipped.")], "stop")

    run = the_run(build)
    assert [d.reason for d in run.disagreements] == ["asked_by_unseen_call"]
    assert {"llm_calls", "messages"} <= set(run.lacks)
    assert [t.name for t in run.tool_calls] == ["lookup_order"]  # the executed call itself is certain


def test_a_request_and_answer_replaced_by_the_redaction_placeholder_are_lacking_never_text() -> None:
    """An instrumentation's hide switches write `__REDACTED__` for what the agent was asked and answered: no
    grader may match a regex or a judge read a rubric against the placeholder."""
    from opentelemetry import trace as otel_trace

    from otelgrade.intake.decode import decode_traces
    from otelgrade.rebuild import rebuild
    from tests.rebuild.test_handoffs import _oi, _otlp

    def build(tracer: Any) -> None:
        agent = _oi(tracer, "desk", "AGENT", input__value="__REDACTED__", output__value="__REDACTED__")
        with otel_trace.use_span(agent, end_on_exit=True):
            _oi(tracer, "ChatOpenAI", "LLM", llm__model_name="gpt-4o").end()

    (run,) = rebuild(decode_traces(_otlp(build)).spans)
    assert (run.input, run.output) == (None, None)
    assert {"input", "output"} <= set(run.lacks)


# --- results no witness shows, once transfers are handoffs -----------------------------------------


def _workflow_failing_after_a_transfer(tracer: Any) -> None:
    """A workflow with no agent spans, only its model calls under the application's span: the first agent's model
    hands over (the call's result says the next agent took over), the next agent's model asks for a tool, and
    the model call that would have been sent the tool's result fails, recording no messages."""
    from opentelemetry.trace import Status, StatusCode

    def system(text: str) -> dict[str, Any]:
        return {"role": "system", "parts": [{"type": "text", "content": text}]}

    def told_back(call_id: str, text: str) -> dict[str, Any]:
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": text}]}

    with tracer.start_as_current_span("handle_request"):
        _chat(tracer, [system("You greet."), parts_user(QUESTION)], [parts_calls(("c1", "pass_on", {"to": "clerk"}))])
        took = told_back("c1", "Agent clerk is now handling the request.")
        clerk = [system("You look orders up."), parts_user(QUESTION), took]
        _chat(tracer, clerk, [parts_calls(("c2", "lookup_order", {"order": 7}))])
        with tracer.start_as_current_span("chat gpt-4o") as failed:
            failed.set_attribute("gen_ai.operation.name", "chat")
            failed.set_attribute("gen_ai.request.model", "gpt-4o")
            failed.set_status(Status(StatusCode.ERROR, "model backend down"))


def test_a_tool_result_lost_with_a_failed_model_call_is_lacking_once_the_transfer_is_a_handoff() -> None:
    (run,) = rebuild(decode_traces(_otlp(_workflow_failing_after_a_transfer)).spans)
    assert [h.to_agent for h in run.handoffs] == ["clerk"]
    assert [(t.name, t.result) for t in run.tool_calls] == [("lookup_order", None)]
    assert run.status == "error"
    assert "tool_results" in run.lacks  # the transfer's answer was no result of the request's tool
