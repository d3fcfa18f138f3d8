"""One tool call seen at several layers is one execution: a framework's tool span, the protocol client's span
under it (`tools/call <tool>`) and the server's span in another service whose context was propagated are
witnesses of the same call, never two or three calls.

Two executions of a run are one call when one runs inside the other (the nearest execution above it) and both are
the same tool (its name, or a qualified name's last part: `mcp__files__read` and `files.read` are `read`) or the
inner one names no tool (a framework's span for a step of the call, such as its failure), when they
carry the same call id, or the same JSON-RPC request id of one MCP session (`jsonrpc.request.id`, `mcp.session.id`)
for the same tool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TypeVar

from otelgrade.core.spans import Span
from otelgrade.rebuild.facts import ToolFacts
from otelgrade.rebuild.tree import Tree

_QUALIFIERS = re.compile(r"__|[./:]")
_WORDS = re.compile(r"[a-z0-9]+")

Execution = tuple[Span, ToolFacts]
V = TypeVar("V")
_RPC_ID, _MCP_REQUEST_ID = "jsonrpc.request.id", "mcp.request.id"
_SESSION = "mcp.session.id"


def tool_key(name: str) -> str:
    """The tool a name calls, without a qualifier (a server's or plugin's prefix), case or separators."""
    last = _QUALIFIERS.split(name.strip())[-1] or name
    return "_".join(_WORDS.findall(last.lower()))


def same_tool(outer: str, inner: str) -> bool:
    """`inner` names the tool `outer` names: the same key, or the key of `outer` ending in it after a separator
    (a plugin's or server's prefix joined with `_`: `orders_lookup_order` runs `lookup_order`)."""
    a, b = tool_key(outer), tool_key(inner)
    return a == b or (bool(b) and a.endswith("_" + b))


def nearest_above(tree: Tree, marked: Mapping[str, V]) -> Callable[[str], V | None]:
    """A lookup of the value of a span's nearest ancestor in `marked`, each span walked once over all lookups."""
    memo: dict[str, V | None] = {}

    def lookup(span_id: str) -> V | None:
        path, found = [], None
        parent = tree.parent.get(span_id)
        while parent is not None and parent not in memo:
            if parent in marked:
                found = marked[parent]
                break
            path.append(parent)
            parent = tree.parent.get(parent)
        else:
            found = memo.get(parent) if parent is not None else None
        for walked in path:
            memo[walked] = found
        return found

    return lookup


def _shared_ids(executions: list[Execution]) -> list[list[int]]:
    """Executions that carry the same call id, or the same JSON-RPC request of one MCP session for the same tool
    (the protocol client's and server's spans of one request, wherever the server's span hangs)."""
    by_id: dict[object, list[int]] = {}
    for e, (span, facts) in enumerate(executions):
        if facts.call_id:
            by_id.setdefault(facts.call_id, []).append(e)
        attrs = span.attributes
        request = attrs.get(_RPC_ID, attrs.get(_MCP_REQUEST_ID))
        if request is not None:
            by_id.setdefault((attrs.get(_SESSION), str(request), tool_key(facts.name)), []).append(e)
    return [group for group in by_id.values() if len(group) > 1]


def one_per_call(tree: Tree, executions: list[Execution], notes: dict[str, str] | None = None) -> list[Execution]:
    """`executions` (in the order given) with every call's layers folded into its outermost span: the call keeps
    that span, the first arguments, result and call id any layer recorded, and fails when the outermost or the
    innermost layer failed (a retried inner attempt does not fail the call). `notes` says which spans were folded."""
    if len(executions) < 2:
        return executions
    at = {span.span_id: e for e, (span, _) in enumerate(executions)}
    execution_above = nearest_above(tree, at)
    above = {e: outer for span_id, e in at.items() if (outer := execution_above(span_id)) is not None}
    shared = _shared_ids(executions)
    if not above and not shared:
        return executions  # no execution inside another and no id said twice: nothing to fold (most runs)
    owner = list(range(len(executions)))

    def root(e: int) -> int:
        while owner[e] != e:
            e = owner[e]
        return e

    def fold(one: int, other: int) -> None:
        a, b = root(one), root(other)
        if a != b:
            earlier = tree.order[executions[a][0].span_id] <= tree.order[executions[b][0].span_id]
            owner[b if earlier else a] = a if earlier else b

    for group in shared:
        for e in group[1:]:
            fold(group[0], e)
    for e, outer in above.items():
        if executions[e][1].anonymous or same_tool(executions[outer][1].name, executions[e][1].name):
            fold(outer, e)
    groups: dict[int, list[int]] = {}
    for e in range(len(executions)):
        groups.setdefault(root(e), []).append(e)
    if len(groups) == len(executions):
        return executions
    out = []
    for head, members in groups.items():
        if len(members) == 1:
            out.append(executions[head])
            continue
        layers = sorted(members, key=lambda m: tree.order[executions[m][0].span_id])
        said = [executions[m][1] for m in layers]
        span = executions[layers[0]][0]
        merged = ToolFacts(
            name=said[0].name,
            call_id=next((f.call_id for f in said if f.call_id), None),
            arguments=next((f.arguments for f in said if f.arguments is not None), None),
            result=next((f.result for f in said if f.result is not None), None),
            error=said[0].error or said[-1].error,
        )
        out.append((span, merged))
        if notes is not None:
            for m in layers[1:]:
                notes[executions[m][0].span_id] = (
                    f"the same call as `{said[0].name}` (span {span.span_id}), seen at another layer: one execution"
                )
    return out
