"""Match the tool calls a run's model responses requested with the tool spans that executed them.

Not every tool span is a tool call of the agent: a framework's answer tool (its argument is the run's
answer) and its bookkeeping spans (ADK's merged span around parallel calls) are left out, and a call
id that is a placeholder (`<not specified>`) counts as no id, so the call still meets its execution.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from otelgrade.core.spans import Span
from otelgrade.core.trajectory import ToolCall
from otelgrade.rebuild.facts import RequestedCall, Step, ToolFacts
from otelgrade.rebuild.messages import Message, assistant_text, parse_json_maybe, tool_results, tool_value
from otelgrade.rebuild.outputs import placeholder
from otelgrade.rebuild.react import with_observations
from otelgrade.rebuild.span_readers import duration_s
from otelgrade.rebuild.tool_errors import failed_results, says_failed
from otelgrade.rebuild.transfers import answer_tools as named_answer_tools
from otelgrade.rebuild.tree import Tree
from otelgrade.rebuild.witnesses import nearest_above, one_per_call, tool_key

_WORDS = re.compile(r"[a-z0-9]+")
_PLACEHOLDER_IDS = frozenset({"", "none", "null", "undefined", "<not specified>"})
_Call = TypeVar("_Call", RequestedCall, ToolFacts)


def real_id(call_id: str | None) -> str | None:
    return None if call_id is None or call_id.strip().lower() in _PLACEHOLDER_IDS else call_id


def _with_call_id(call: _Call, call_id: str | None) -> _Call:
    """`call` with `call_id`, copied only when that changes it (a copy per call is measurable on the hot path)."""
    return call if call.call_id == call_id else replace(call, call_id=call_id)


def is_bookkeeping(name: str) -> bool:
    """A span a framework adds around real calls, named in parentheses: ADK's `(merged tools)`."""
    return name.startswith("(") and name.endswith(")")


def tool_calls(
    tree: Tree,
    executions: list[tuple[Span, ToolFacts]],
    steps: list[Step],
    recorded: Sequence[ToolFacts] = (),
    notes: dict[str, str] | None = None,
    returned: str | None = None,
) -> tuple[list[ToolCall], str | None]:
    """A run's tool calls, ordered by the response that requested them, then their order in it, and the
    answer an answer tool delivered (None without one).

    Each requested call takes its execution span: by call id, else by name and equal arguments,
    else by name alone, in order. Executions no response asked for (content not captured) are
    placed by their parent LLM span, else by time, after that step's requested calls. A call that ends
    with no result takes it from the run's own record of that tool run (same name and arguments).
    `returned` is the answer the run's agent span recorded, if any: a tool that delivered it is an answer tool.
    """
    answer_tools = named_answer_tools() | _delivering(steps, returned, executions)
    for span, facts in executions:
        if notes is not None and facts.name in answer_tools:
            notes[span.span_id] = f"`{facts.name}` is the framework's answer tool: its argument is the run's answer"
        elif notes is not None and is_bookkeeping(facts.name):
            notes[span.span_id] = f"`{facts.name}` is the framework's bookkeeping around real calls, not a call"
    answers = [f.arguments for _, f in executions if f.name in answer_tools]
    answers += [c.arguments for s in steps for c in s.calls if c.name in answer_tools]
    executions = sorted(
        one_per_call(
            tree,
            [
                (span, _with_call_id(facts, real_id(facts.call_id)))
                for span, facts in executions
                if facts.name not in answer_tools and not is_bookkeeping(facts.name)
            ],
            notes,
        ),
        key=lambda sf: (sf[0].start_ns, tree.order[sf[0].span_id]),
    )
    requested = [
        (step, i, _with_call_id(call, real_id(call.call_id)))
        for step in steps
        for i, call in enumerate(c for c in step.calls if c.name not in answer_tools)
    ]
    matched: dict[int, int] = {}  # requested index -> execution index
    used: set[int] = set()

    def match(rule: Callable[[RequestedCall, ToolFacts], bool]) -> None:
        for r, (_, _, call) in enumerate(requested):
            if r in matched:
                continue
            for e, (_, facts) in enumerate(executions):
                if e not in used and rule(call, facts):
                    matched[r] = e
                    used.add(e)
                    break

    by_id: dict[str, list[int]] = {}
    for e, (_, facts) in enumerate(executions):
        if facts.call_id:
            by_id.setdefault(facts.call_id, []).append(e)
    for r, (_, _, call) in enumerate(requested):  # by call id first, without a quadratic scan
        candidates = [e for e in by_id.get(call.call_id or "", ()) if e not in used]
        if candidates:
            matched[r] = candidates[0]
            used.add(candidates[0])
    # Two ids tell calls apart only when they come from one id space: where no request's id is any execution's
    # (a framework that numbers its executions itself), the ids say nothing and names decide.
    apart = not matched and bool(by_id) and any(call.call_id for _, _, call in requested)

    def free(c: RequestedCall, f: ToolFacts) -> bool:
        return apart or not (c.call_id and f.call_id)

    match(lambda c, f: free(c, f) and c.name == f.name and _same_args(c.arguments, f.arguments))
    match(lambda c, f: free(c, f) and c.name == f.name)
    match(lambda c, f: free(c, f) and _spelling(c.name) == _spelling(f.name))
    match(lambda c, f: free(c, f) and tool_key(c.name) == tool_key(f.name))
    _pair_the_lone(tree, steps, requested, executions, matched, used, free)

    conversations = _conversations(steps)
    results = _conversation_results(conversations)
    failures = failed_results(conversations)
    ordered: list[tuple[tuple[int, int, int, int], ToolCall]] = []
    for r, (step, i, call) in enumerate(requested):
        execution = executions[matched[r]] if r in matched else None
        if execution is None:
            failed = call.call_id in failures
            tc = ToolCall(
                name=call.name,
                call_id=call.call_id,
                arguments=call.arguments,
                step=step.index,
                result=None if failed else results.get(call.call_id or ""),
                error=failed,
                witnesses=["request", "result"] if failed or call.call_id in results else ["request"],
            )
        else:
            span, facts = execution
            tc = ToolCall(
                name=call.name,
                call_id=call.call_id or facts.call_id,
                arguments=call.arguments if call.arguments is not None else facts.arguments,
                result=tool_value(facts.result)
                if facts.result is not None or facts.error
                else results.get(call.call_id or ""),
                error=facts.error or call.call_id in failures or says_failed(facts.result),
                step=step.index,
                span_id=span.span_id,
                duration_s=duration_s(span),
                witnesses=["request", "execution"],
            )
        ordered.append(((step.index, 0, i, 0), tc))
    placed = _placement(tree, steps)
    for e, (span, facts) in enumerate(executions):
        if e in used:
            continue
        step_index = placed(span)
        tc = ToolCall(
            name=facts.name,
            call_id=facts.call_id,
            arguments=facts.arguments,
            result=tool_value(facts.result),
            error=facts.error or says_failed(facts.result),
            step=step_index,
            span_id=span.span_id,
            duration_s=duration_s(span),
            witnesses=["execution"],
        )
        ordered.append(((step_index, 1, span.start_ns, tree.order[span.span_id]), tc))
    ordered.sort(key=lambda kv: kv[0])
    calls = [tc for _, tc in ordered]
    _fill_results(calls, list(recorded))
    return calls, _answer_text(answers[-1]) if answers else None


def _placement(tree: Tree, steps: list[Step]) -> Callable[[Span], int]:
    """The step an execution no request matched belongs to: its nearest model-call span above, else the last step
    to start before it among the model calls of its own loop (those whose parent is the nearest span above it that
    is a model call's parent: its agent's loop, not a concurrent agent's beside it), else among all."""
    step_above = nearest_above(tree, {s.span.span_id: s.index for s in steps})
    starts = sorted(s.span.start_ns for s in steps)
    loops: dict[str, list[tuple[int, int]]] = {}  # a model call's parent -> (start, index) of its model calls
    loop_above = nearest_above(tree, loops)

    def placed(span: Span) -> int:
        at = step_above(span.span_id)
        if at is not None:
            return at
        if not loops:  # built at the first execution placed by time
            for step in steps:
                if (parent := tree.parent.get(step.span.span_id)) is not None:
                    loops.setdefault(parent, []).append((step.span.start_ns, step.index))
            for calls in loops.values():
                calls.sort()
        loop = loop_above(span.span_id) or []
        before = bisect_right(loop, (span.start_ns, len(steps) + 1))
        return loop[before - 1][1] if before else bisect_right(starts, span.start_ns)

    return placed


def _pair_the_lone(
    tree: Tree,
    steps: list[Step],
    requested: list[tuple[Step, int, RequestedCall]],
    executions: list[tuple[Span, ToolFacts]],
    matched: dict[int, int],
    used: set[int],
    free: Callable[[RequestedCall, ToolFacts], bool],
) -> None:
    """A response's one call no execution matched by name, and the one execution of that step no request matched:
    one call (a framework that traces its tool under a display name of its own, renamed or translated)."""
    lone_asks: dict[int, list[int]] = {}
    for r, (step, _, _) in enumerate(requested):
        if r not in matched:
            lone_asks.setdefault(step.index, []).append(r)
    if not lone_asks:
        return
    placed = _placement(tree, steps)
    lone_runs: dict[int, list[int]] = {}
    for e, (span, _) in enumerate(executions):
        if e not in used:
            lone_runs.setdefault(placed(span), []).append(e)
    for index, asks in lone_asks.items():
        runs = lone_runs.get(index, [])
        if len(asks) == 1 and len(runs) == 1 and free(requested[asks[0]][2], executions[runs[0]][1]):
            matched[asks[0]] = runs[0]
            used.add(runs[0])


def _delivering(
    steps: list[Step], returned: str | None, executions: Sequence[tuple[Span, ToolFacts]]
) -> frozenset[str]:
    """The tool that delivered the run's answer, by what it did: the one call of the last model response, whose
    argument is exactly the answer the agent returned (a framework's output or `final_answer`-like tool, whatever
    its name); or, where the agent recorded no answer, whose one argument is a sentence and whose execution
    returned nothing (`None`) where the run's other executions record their results, the loop ending there, no
    model told its result (a `complete_task` tool that ends an orchestration). A last call that returned
    something is never dropped on a guess. Also a tool no response asked for, run by the framework after the last
    response to deliver what that response said (its argument is that text)."""
    if steps and steps[-1].facts.output_messages and (said := assistant_text(steps[-1].facts.output_messages)):
        asked = {c.name for step in steps for c in step.calls}
        after = steps[-1].span.end_ns
        echoed = frozenset(
            f.name
            for span, f in executions
            if f.name not in asked and span.start_ns >= after and _answer_text(f.arguments) == said
        )
        if echoed:
            return echoed
    if not steps or len(steps[-1].calls) != 1 or _said(steps[-1]):
        return frozenset()
    call = steps[-1].calls[0]
    delivered = _answer_text(call.arguments)
    if delivered is None:
        return frozenset()
    if returned:
        same = " ".join(delivered.split()) == " ".join(returned.split())
        return frozenset({call.name}) if same else frozenset()
    ran = [f for _, f in executions if f.name == call.name and (not call.call_id or f.call_id == call.call_id)]
    void = bool(ran) and all(not f.error and (f.result is None or placeholder(f.result)) for f in ran)
    void = void and any(f.result and not placeholder(f.result) for _, f in executions)  # results are recorded
    sentence = isinstance(parse_json_maybe(call.arguments), dict) and " " in delivered.strip()
    return frozenset({call.name}) if void and sentence else frozenset()


def _said(step: Step) -> bool:
    return any(m.get("role") == "assistant" and m.get("content") for m in step.facts.output_messages)


def _fill_results(calls: list[ToolCall], recorded: list[ToolFacts]) -> None:
    for call in calls:
        if call.result is not None or call.error:
            continue
        found = next(
            (
                r
                for r in recorded
                if r.name == call.name and (call.arguments is None or _same_args(call.arguments, r.arguments))
            ),
            None,
        )
        if found is not None:
            recorded.remove(found)
            call.result = found.result
            call.arguments = call.arguments if call.arguments is not None else found.arguments


def _answer_text(arguments: Any) -> str | None:
    """An answer tool's argument as text: `{"answer": "..."}` (one field) gives its value."""
    value = parse_json_maybe(arguments)
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _spelling(name: str) -> str:
    """A tool name without case and separators: a display name (`Delegate work to coworker`) meets the name
    the model called (`delegate_work_to_coworker`)."""
    return "_".join(_WORDS.findall(name.lower()))


def _same_args(a: Any, b: Any) -> bool:
    return bool(_canonical(a) == _canonical(b))


def _canonical(value: Any) -> Any:
    value = parse_json_maybe(value)
    if isinstance(value, str):
        return value.strip()
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _conversations(steps: list[Step]) -> list[list[Message]]:
    """Each model request's messages, with tool results that carry no call id (an instrumentation's message
    events that drop it) given the ids of the previous response's calls, in order, when they are as many after
    the request's last assistant message."""
    out = []
    for before, step in zip([None, *steps], steps, strict=False):
        messages = with_observations(step.facts.input_messages)
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        unnamed = [i for i in range(last + 1, len(messages)) if messages[i].get("role") == "tool"]
        unnamed = [i for i in unnamed if not messages[i].get("tool_call_id")]
        if before is not None and unnamed and len(unnamed) == len(before.calls):
            messages = list(messages)
            for i, call in zip(unnamed, before.calls, strict=True):
                messages[i] = {**messages[i], "tool_call_id": call.call_id}
        out.append(messages)
    return out


def _conversation_results(conversations: list[list[Message]]) -> dict[str, str]:
    """Tool results by call id, as later model requests show them."""
    out: dict[str, str] = {}
    for messages in conversations:
        for call_id, result in tool_results(messages).items():
            out.setdefault(call_id, tool_value(result) or result)
    return out
