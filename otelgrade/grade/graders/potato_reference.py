"""Potato's reading of outputs and reference trajectories: its text view of a value, its normaliser of
reference tool calls (OpenAI messages, `conversation` turns, bare calls), and its argument comparison.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from otelgrade.core.trajectory import Trajectory

_TEXT_KEYS = ("output", "text", "content", "answer", "final_answer")


def as_text(value: Any) -> str:
    """Potato's text view of an output: None -> "", a dict -> its first string among output/text/content/
    answer/final_answer, anything else -> `str()` (so `True` is "True" and lists are Python reprs)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _TEXT_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
    return str(value)


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]


def coerce_args(value: Any) -> dict[str, Any]:
    """Arguments as a dict: a dict as is, None/"" -> {}, a JSON object string parsed, other JSON ->
    `{"_value": parsed}`, unparseable text -> `{"_raw": text}`."""
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"_raw": value}
        return parsed if isinstance(parsed, dict) else {"_value": parsed}
    return {"_value": value}


def reference_calls(reference: Any) -> list[Call]:
    """The tool calls in a reference trajectory, read as Potato's normaliser reads it (plus a plain list
    of `{name, arguments}` calls). A dict in no shape Potato knows yields nothing, as in Potato."""
    if reference is None or isinstance(reference, str):
        return []
    if isinstance(reference, list):
        return [call for item in reference for call in _item_calls(item)]
    if isinstance(reference, Mapping):
        return _item_calls(reference)
    return []


def _item_calls(item: Any) -> list[Call]:
    if isinstance(item, list):
        return reference_calls(item)
    if not isinstance(item, Mapping):
        return []
    if "messages" in item:
        messages = item["messages"]
        return (
            [c for m in messages if isinstance(m, Mapping) for c in _message_calls(m)]
            if isinstance(messages, list)
            else []
        )
    if "conversation" in item:
        turns = item["conversation"]
        return [c for t in turns if isinstance(t, Mapping) for c in _turn_calls(t)] if isinstance(turns, list) else []
    if "role" in item:
        return _message_calls(item)
    if "speaker" in item:
        return _turn_calls(item)
    if isinstance(item.get("name"), str) and ("arguments" in item or "args" in item):  # a bare call (otelgrade)
        return [Call(item["name"] or "unknown", coerce_args(item.get("arguments", item.get("args"))))]
    return []


def _message_calls(message: Mapping[str, Any]) -> list[Call]:
    """Tool calls of one OpenAI-style message (`tool_calls[*].function`, flat `{name, arguments}`, or the
    legacy `function_call`); tool-result messages carry none."""
    if message.get("role") == "tool":
        return []
    calls = []
    for tool_call in message.get("tool_calls") or []:
        if not isinstance(tool_call, Mapping):
            continue
        function = tool_call.get("function")
        spec = function if isinstance(function, Mapping) else tool_call
        calls.append(Call(spec.get("name") or "unknown", coerce_args(spec.get("arguments"))))
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping):
        calls.append(Call(legacy.get("name") or "unknown", coerce_args(legacy.get("arguments"))))
    return calls


_ACTION = re.compile(r"^\s*([^(]*?)\s*\((.*)\)\s*$", re.DOTALL)


def _turn_calls(turn: Mapping[str, Any]) -> list[Call]:
    """A canonical turn is a tool call only when its speaker says "(action)"; its text is `name(json)`
    (Python-style kwargs stay unparsed, as `{"_raw": ...}`) or a bare tool name."""
    if "(action)" not in str(turn.get("speaker", "")).lower():
        return []
    text = str(turn.get("text", turn.get("content", "")) or "").strip()
    match = _ACTION.match(text)
    if not match:
        return [Call(text or "unknown", {})]
    return [Call(match.group(1) or "unknown", coerce_args(match.group(2).strip()))]


def agent_calls(trajectory: Trajectory) -> list[Call]:
    return [Call(c.name or "unknown", coerce_args(c.arguments)) for c in trajectory.tool_calls]


def args_match(mode: str, agent: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    """Flat comparison with Python `==` (so 1 == 1.0 and True == 1): `subset` = agent args inside the
    reference's, `superset` = agent args contain the reference's."""
    if mode == "exact":
        return dict(agent) == dict(reference)
    if mode == "ignore":
        return True
    if mode == "subset":
        return all(k in reference and reference[k] == v for k, v in agent.items())
    if mode == "superset":
        return all(k in agent and agent[k] == v for k, v in reference.items())
    raise ValueError(f"Unknown tool_args_match_mode: {mode}")


def greedy_matches(wanted: Sequence[Call], pool: Sequence[Call], matches: Callable[[Call, Call], bool]) -> int:
    """How many `wanted` calls each take the first unused `pool` call that `matches(pool_call, wanted_call)`."""
    used = [False] * len(pool)
    hits = 0
    for want in wanted:
        for j, candidate in enumerate(pool):
            if not used[j] and matches(candidate, want):
                used[j] = True
                hits += 1
                break
    return hits
