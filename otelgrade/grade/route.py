"""Which suites a run belongs to: a suite's `match` block as a predicate on the `Trajectory`.

A suite grades the requests users made (runs with no `parent_span_id`). A suite whose `match` names an agent
(`agent_name`) grades that agent's own runs wherever they are: nested in a request of several agents, or a
request that is one agent's invocation (`own_run`).

Keys are run fields (`service.name`, `agent_name`, `source`, `status`) or run/resource attributes; a value
starting with `^` is a regular expression (run within `patterns`' time budget: one that runs out does not
match, and says so in the log), a list accepts any of its values, anything else must be equal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from otelgrade.core.patterns import Pattern, PatternTimeout
from otelgrade.core.trajectory import Trajectory

log = logging.getLogger(__name__)

Predicate = Callable[[Trajectory], bool]

FIELDS: dict[str, Callable[[Trajectory], Any]] = {
    "service.name": lambda t: t.service_name,
    "service_name": lambda t: t.service_name,
    "agent_name": lambda t: t.agent_name,
    "gen_ai.agent.name": lambda t: t.agent_name,
    "source": lambda t: t.source,
    "status": lambda t: t.status,
}


def value_matcher(expected: Any) -> Callable[[Any], bool]:
    """One `match` value as a test: `^...` a regex, a list any of its values, anything else equality."""
    if isinstance(expected, list):
        options = [value_matcher(e) for e in expected]
        return lambda v: any(option(v) for option in options)
    if isinstance(expected, str) and expected.startswith("^"):
        return _pattern_matcher(Pattern(expected))
    if isinstance(expected, str):
        return lambda v: v is not None and str(v) == expected
    return lambda v: v == expected


def _pattern_matcher(pattern: Pattern) -> Callable[[Any], bool]:
    def matches(value: Any) -> bool:
        try:
            return value is not None and pattern.search(str(value)) is not None
        except PatternTimeout as exc:
            log.warning("suite match: %s; the run is taken as not matching", exc)
            return False

    return matches


def _attribute_reader(key: str) -> Callable[[Trajectory], Any]:
    return lambda t: t.attributes.get(key)


_AGENT_KEYS = frozenset({"agent_name", "gen_ai.agent.name"})


def match_filter(match: Mapping[str, Any]) -> Predicate:
    """The predicate of a suite's `match` block: every key must match (an empty block matches every request)."""
    checks = [(FIELDS.get(key) or _attribute_reader(key), value_matcher(value)) for key, value in match.items()]
    if _AGENT_KEYS.isdisjoint(match):
        return lambda t: t.parent_span_id is None and all(accepts(read(t)) for read, accepts in checks)
    return lambda t: t.own_run and all(accepts(read(t)) for read, accepts in checks)
