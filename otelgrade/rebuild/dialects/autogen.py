"""AutoGen (autogen-core's own tracing): `invoke_agent` / `execute_tool` spans in GenAI conventions marked
`gen_ai.system=autogen`, and no span per model call. Content travels only through AutoGen's event logger
(`autogen_core.events`, exported as log records on the agent span, kept by decode as `autogen.event`):
each `LLMCall` record is one successful model call with its request messages, raw response and token
counts. Without those records the run's model calls, messages and tool arguments are not in the trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.dialects import genai
from otelgrade.rebuild.facts import Facts, LLMFacts, ToolFacts
from otelgrade.rebuild.span_readers import integer, payload, text
from otelgrade.rebuild.tree import Tree

EVENT = "autogen.event"


def read(span: Span) -> Facts | None:
    attrs = span.attributes
    if attrs.get("gen_ai.system") != "autogen" or attrs.get("gen_ai.operation.name") != "invoke_agent":
        return None  # another system's GenAI span; AutoGen's tool spans are plain GenAI conventions
    records = [payload(e) for e in span.events if e.name == EVENT]
    calls = [_call(r) for r in records if r.get("type") == "LLMCall"]
    tools = [
        ToolFacts(name=str(r["tool_name"]), arguments=r.get("arguments"), result=msg.result_text(r.get("result")))
        for r in records
        if r.get("type") == "ToolCall" and r.get("tool_name")
    ]
    run = replace(genai.agent(span), tool_records=tools, team=_team(attrs.get("gen_ai.agent.id")))
    if not calls:
        return run
    last = calls[-1]
    answered = not any(m.get("tool_calls") for m in last.output_messages)
    return replace(
        run,
        calls=calls,
        input=run.input or msg.last_user_text(calls[0].input_messages),
        output=run.output or (msg.assistant_text(last.output_messages) if answered else None),
    )


_ACTOR = re.compile(r"^\S+ process \S+?_([0-9a-f]{32})\.\(")
# autogen-core's runtime tracing, which Semantic Kernel's InProcessRuntime shares: `<runtime> process
# <agent type>_<team id>.(<key>)-A` for an actor handling a message; a team's actors share its id


def runtime_actor(tree: Tree, root: str) -> tuple[str, str | None] | None:
    """The team whose runtime actor runs an agent's invocation (the nearest such span above it), and the span of
    the message it handles where that message was published to the team's topic (a chat every member hears; the
    members handling one published message heard it together); None where it was sent to the actor alone (the
    next step of a pipeline)."""
    for above in tree.ancestors(root):
        found = _ACTOR.match(tree.spans[above].name)
        if found:
            parent = tree.parent.get(above)
            published = parent is not None and " publish " in tree.spans[parent].name
            return found.group(1), parent if published else None
    return None


_TEAM_ACTOR = re.compile(r"^\S+ process (\S+?)_([0-9a-f]{32}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\.\(")
# any runtime actor of a team (AutoGen's team ids are UUIDs written with dashes, Semantic Kernel's without): its type


def team_of(tree: Tree, root: str, team: str | None) -> str | None:
    """The team an agent's invocation is a turn of: the one its span states (`team`), else its runtime actor's."""
    if team is not None:
        return team
    actor = runtime_actor(tree, root)
    return actor[0] if actor else None


def manager_calls(
    tree: Tree, teams: Collection[str], loose: Collection[str] = (), agents: Collection[str] = ()
) -> dict[str, list[tuple[str, str, list[LLMFacts]]]]:
    """The model calls each team's manager made on its own (a group chat's selector choosing the next speaker, an
    orchestrator's facts, plans, ledgers and final answer): the calls made in a runtime actor of the team outside
    every agent's invocation (`agents`) — `LLMCall` records on the actor's span, and model-call spans that are in no
    agent's run (`loose`) beneath it. By team id, in order: (the span of the actor holding records, or of the call;
    the actor's type; the recorded calls, none where the span is the call)."""
    found: list[tuple[str, str, str, list[LLMFacts]]] = []  # (span, actor type, team, calls)
    for sid in tree.order:
        span = tree.spans[sid]
        if not span.events or (actor := _TEAM_ACTOR.match(span.name)) is None or actor.group(2) not in teams:
            continue
        records = [payload(e) for e in span.events if e.name == EVENT]
        calls = [_call(r) for r in records if r.get("type") == "LLMCall"]
        if calls:
            found.append((sid, actor.group(1), actor.group(2), calls))
    for sid in loose:
        for above in tree.ancestors(sid):
            if above in agents:
                break
            if (actor := _TEAM_ACTOR.match(tree.spans[above].name)) is not None:
                if actor.group(2) in teams:
                    found.append((sid, actor.group(1), actor.group(2), []))
                break
    out: dict[str, list[tuple[str, str, list[LLMFacts]]]] = {}
    for sid, kind, team, calls in sorted(found, key=lambda f: tree.order[f[0]]):
        out.setdefault(team, []).append((sid, kind, calls))
    return out


def team_task(span: Span) -> str | None:
    """What the user asked a team: the user's message in the one its manager's actor handles (AutoGen's runtime
    records the message it delivers as JSON in `message`)."""
    raw = span.attributes.get("message")
    if not isinstance(raw, str) or '"user"' not in raw:
        return None
    try:
        sent = json.loads(raw)
    except ValueError:
        return None
    said = [m for m in sent.get("messages") or () if isinstance(m, dict)] if isinstance(sent, dict) else []
    return next((m["content"] for m in said if m.get("source") == "user" and isinstance(m.get("content"), str)), None)


def _team(agent_id: object) -> str | None:
    """The group chat a run is a turn of: AutoGen's agent id is `type/key`, and a team starts every agent of its
    chat under one key (its own id)."""
    if not isinstance(agent_id, str) or "/" not in agent_id:
        return None
    return agent_id.rpartition("/")[2] or None


def _call(record: dict[str, Any]) -> LLMFacts:
    raw = record.get("response")
    response: dict[str, Any] = raw if isinstance(raw, dict) else {}
    choices = [c for c in response.get("choices") or [] if isinstance(c, dict)]
    choice = choices[0] if choices else {}
    message = choice.get("message")
    return LLMFacts(
        model=text(response.get("model")),
        provider="openai" if response.get("object") == "chat.completion" else None,
        input_tokens=integer(record.get("prompt_tokens")),
        output_tokens=integer(record.get("completion_tokens")),
        input_messages=msg.from_openai([m for m in record.get("messages") or [] if isinstance(m, dict)]),
        output_messages=msg.from_openai([message]) if isinstance(message, dict) else [],
        finish_reason=text(choice.get("finish_reason")),
    )


DIALECT = Dialect(
    name="autogen",
    priority=80,
    marks=frozenset({"gen_ai.system"}),
    read=read,
    agent_name_keys=("gen_ai.agent.name",),
    event_loggers={"autogen_core.events": "autogen.event"},
    transfer_names=(r"transfer_to_",),  # AgentChat's swarm handoffs
)
