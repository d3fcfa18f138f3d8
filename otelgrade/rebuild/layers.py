"""One model call seen at two layers side by side: a provider SDK's own span and an instrumentation's span of the
same request, siblings under the application's span rather than nested.

They are one call when the trace says so by structure and timing: same parent, one span's time holding the
other's, and what they record of the exchange agrees (the same response id, else the same token counts, or both
failing with no response). The span
held in time, nearer the wire, stands for the call; the other is its wrapper (`runs.innermost_calls`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from otelgrade.rebuild.facts import LLMFacts
from otelgrade.rebuild.span_readers import is_error
from otelgrade.rebuild.tree import Tree

_RESPONSE_ID = "gen_ai.response.id"


def side_by_side(tree: Tree, found: Mapping[str, LLMFacts]) -> dict[str, str]:
    """Model-call spans that record the same call as a sibling does: the span kept -> the sibling it wraps in time."""
    by_parent: dict[str | None, list[str]] = {}
    for sid in found:
        by_parent.setdefault(tree.parent.get(sid), []).append(sid)
    out: dict[str, str] = {}
    for siblings in by_parent.values():
        if len(siblings) < 2:
            continue
        siblings.sort(key=lambda s: (tree.spans[s].start_ns, -tree.spans[s].end_ns))
        for outer, inner in itertools.pairwise(siblings):
            if outer not in out and inner not in out.values() and _same_call(tree, found, outer, inner):
                out[inner] = outer
    return out


def _same_call(tree: Tree, found: Mapping[str, LLMFacts], outer: str, inner: str) -> bool:
    a, b = tree.spans[outer], tree.spans[inner]
    if not (a.start_ns <= b.start_ns and b.end_ns <= a.end_ns):
        return False
    ids = a.attributes.get(_RESPONSE_ID), b.attributes.get(_RESPONSE_ID)
    if ids[0] and ids[1]:
        return bool(ids[0] == ids[1])
    x, y = found[outer], found[inner]
    if is_error(a) and is_error(b) and not any(ids) and x.output_tokens is None and y.output_tokens is None:
        return True  # the same request failing at both layers, before any response
    return (
        x.input_tokens is not None
        and x.output_tokens is not None
        and (x.input_tokens, x.output_tokens) == (y.input_tokens, y.output_tokens)
        and (x.model is None or y.model is None or x.model == y.model)
    )
