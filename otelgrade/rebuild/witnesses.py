"""One tool call seen at several layers is one execution: a framework's tool span, the protocol client's span
under it (`tools/call <tool>`) and the server's span in another service whose context was propagated are
witnesses of the same call, never two or three calls.

Two executions of a run are one call when one runs inside the other and both are the same tool (its name, or a
qualified name's last part: `mcp__files__read` and `files.read` are `read`), or when they carry the same call id.
"""

from __future__ import annotations

import re

from otelgrade.rebuild.facts import ToolFacts
from otelgrade.rebuild.tree import Tree
from otelgrade.spans import Span

_QUALIFIERS = re.compile(r"__|[./:]")
_WORDS = re.compile(r"[a-z0-9]+")

Execution = tuple[Span, ToolFacts]


def tool_key(name: str) -> str:
    """The tool a name calls, without a qualifier (a server's or plugin's prefix), case or separators."""
    last = _QUALIFIERS.split(name.strip())[-1] or name
    return "_".join(_WORDS.findall(last.lower()))


def one_per_call(tree: Tree, executions: list[Execution], notes: dict[str, str] | None = None) -> list[Execution]:
    """`executions` (in the order given) with every call's layers folded into its outermost span: the call keeps
    that span, the first arguments, result and call id any layer recorded, and fails when the outermost or the
    innermost layer failed (a retried inner attempt does not fail the call). `notes` says which spans were folded."""
    if len(executions) < 2:
        return executions
    keys = [tool_key(facts.name) for _, facts in executions]
    ids = [facts.call_id for _, facts in executions]
    if len(set(keys)) == len(keys) and len({i for i in ids if i}) == sum(1 for i in ids if i):
        return executions  # every execution a different tool with its own id: nothing to fold (most runs)
    at = {span.span_id: e for e, (span, _) in enumerate(executions)}
    owner = list(range(len(executions)))

    def root(e: int) -> int:
        while owner[e] != e:
            e = owner[e]
        return e

    def fold(outer: int, inner: int) -> None:
        a, b = root(outer), root(inner)
        if a != b:
            earlier = tree.order[executions[a][0].span_id] <= tree.order[executions[b][0].span_id]
            owner[b if earlier else a] = a if earlier else b

    first_with_id: dict[str, int] = {}
    for e, (span, facts) in enumerate(executions):
        if facts.call_id:
            if facts.call_id in first_with_id:
                fold(first_with_id[facts.call_id], e)
            else:
                first_with_id[facts.call_id] = e
        for ancestor in tree.ancestors(span.span_id):
            above = at.get(ancestor)
            if above is not None:
                if keys[above] == keys[e]:
                    fold(above, e)
                break  # the nearest execution above decides: a different tool's work is its own call
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
