"""Who owns a grader name, and what an old spelling says when a config still uses it.

Unprefixed names are otelgrade's own graders. A reference system's grader is named `<prefix>.<its own name>`:
`letta.` (letta-evals grading functions), `evaldeck.` (evaldeck's grader classes, in snake_case), `potato.`
(Potato's evaluator registry) and `vally.` (vally's grader types, kebab-case as vally writes them). It also
loads through that system's own config shape, where the system's names need no prefix: a letta-evals
`{kind: tool, function: ...}`, an evaldeck `expected:` block, a Potato `{name: ..., params: ...}`, a vally
`{type: ..., config: ...}`.

Some reference systems' names used to be unprefixed in otelgrade's own shape (`contains` was Potato's,
`output-matches` vally's JavaScript regex beside otelgrade's Python-regex `output_matches`). Those spellings
still load the same grader, with a warning logged once per process and listed by `otelgrade check-config`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from otelgrade.grade.graders.base import GRADER_TYPES

log = logging.getLogger("otelgrade.config")

SYSTEMS = {"letta": "letta-evals", "evaldeck": "evaldeck", "potato": "Potato", "vally": "vally"}
"""Each reference system's prefix, and the system's name."""

NATIVE_SHAPES = {
    "letta": "{{kind: tool, function: {name}}}",
    "evaldeck": "an evaldeck `expected:` block",
    "potato": "{{name: {name}, params: {{...}}}}",
    "vally": "{{type: {name}, config: {{...}}}}",
}
"""How a grader block in each system's own shape names one of its graders."""

_found: ContextVar[list[str] | None] = ContextVar("deprecated_spellings", default=None)
_logged: set[str] = set()


def owner(type_name: str) -> str:
    """Whose grader a canonical type name is: a reference system's (by its prefix), else otelgrade's."""
    prefix, dot, _ = type_name.partition(".")
    return SYSTEMS[prefix] if dot and prefix in SYSTEMS else "otelgrade"


def native_name(type_name: str) -> str:
    """The name a reference system itself gives one of its graders (the canonical name without the prefix)."""
    prefix, dot, rest = type_name.partition(".")
    return rest if dot and prefix in SYSTEMS else type_name


def deprecation(spelling: str) -> str | None:
    """What a config using `spelling` in otelgrade's own shape is told, or None when the spelling is current."""
    if spelling not in GRADER_TYPES:
        return None
    entry = GRADER_TYPES.get(spelling)
    if spelling not in entry.deprecated:
        return None
    prefix = entry.name.partition(".")[0]
    said = (
        f"grader type {spelling!r} is a deprecated spelling of the {owner(entry.name)} grader "
        f"`{native_name(entry.name)}`: write `type: {entry.name}`"
    )
    if prefix in NATIVE_SHAPES:
        said += f", or {SYSTEMS[prefix]}'s own shape {NATIVE_SHAPES[prefix].format(name=native_name(entry.name))}"
    ours = spelling.replace("-", "_")
    if ours != spelling and ours in GRADER_TYPES and owner(GRADER_TYPES.get(ours).name) == "otelgrade":
        said += f"; otelgrade's own `{ours}` is a different grader (docs/graders.md)"
    return said


def note_spelling(spelling: str) -> None:
    """Record that a config names a grader type `spelling`. A deprecated one is listed by the `collecting()`
    block around the load (`check-config` shows the list), else logged, once per process."""
    said = deprecation(spelling)
    if said is None:
        return
    found = _found.get()
    if found is not None:
        if said not in found:
            found.append(said)
    elif spelling not in _logged:
        _logged.add(spelling)
        log.warning("%s", said)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """The deprecation messages of the grader types a config load inside this block names, each once."""
    found: list[str] = []
    token = _found.set(found)
    try:
        yield found
    finally:
        _found.reset(token)
