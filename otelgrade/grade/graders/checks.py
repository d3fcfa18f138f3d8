"""otelgrade's own checks of a run's final output, the tools it called and its size, under unprefixed names.

Today each is computed by the same code as evaldeck's grader of the same purpose (`graders.evaldeck`, held to
evaldeck's observed behaviour by the conformance cases), so configs written before the names had one owner
grade as they did. The names are otelgrade's: what each promises is said here, and evaldeck's semantics are
asked for as `evaldeck.<grader>` or with an evaldeck `expected:` block.
"""

from __future__ import annotations

from otelgrade.grade.graders import evaldeck  # noqa: F401  (registers the evaldeck graders these share code with)
from otelgrade.grade.graders.base import GRADER_TYPES, GraderType

OWN_CHECKS: dict[str, tuple[str, str]] = {
    "output_contains": (
        "evaldeck.contains",
        "Every string in `values` occurs in the run's final output, case-insensitively unless `case_sensitive`. "
        "No values: nothing to check, a pass.",
    ),
    "output_not_contains": (
        "evaldeck.not_contains",
        "No string in `values` occurs in the final output (case-insensitive unless `case_sensitive`; an empty "
        "string always occurs).",
    ),
    "output_equals": (
        "evaldeck.equals",
        "The final output equals `expected`, both sides with runs of whitespace collapsed to one space and "
        "trimmed unless `normalize_whitespace: false`; case-sensitive. An empty `expected` checks nothing.",
    ),
    "output_matches": (
        "evaldeck.regex",
        "A Python regular expression (`re.search`; `flags` as a Python `re` flag number) finds a match in the "
        "final output; an invalid pattern is an `error` grade. vally's JavaScript-regex check is "
        "`vally.output-matches`.",
    ),
    "tools_called": (
        "evaldeck.tool_called",
        "Every tool named in `tools` (or `required`) was called at least once; order and repeats do not matter.",
    ),
    "tools_not_called": (
        "evaldeck.tool_not_called",
        "No tool named in `tools` (or `forbidden`) was called.",
    ),
    "tool_call_order": (
        "evaldeck.tool_order",
        "The tools in `tools` (or `expected_order`) were called in that order; other calls may come between "
        "them, and a name listed twice needs two calls.",
    ),
    "max_steps": (
        "evaldeck.max_steps",
        "At most `max` steps, counting model calls, tool calls and reasoning steps.",
    ),
    "max_tool_calls": (
        "evaldeck.max_tool_calls",
        "At most `max` tool calls. `count: own_agent` counts only the calls of the run's own agent, not its "
        "workers' (by default every agent's calls under the run count).",
    ),
    "max_llm_calls": (
        "evaldeck.max_llm_calls",
        "At most `max` model calls (`count: own_agent`: only the run's own agent's).",
    ),
    "task_completed": (
        "evaldeck.task_completed",
        "The run ended `ok` with a non-empty output. `require_success: false` expects the opposite: the run "
        "did not complete.",
    ),
}
"""otelgrade's name -> (the grader whose code computes it, what it promises)."""

for _name, (_computed_by, _summary) in OWN_CHECKS.items():
    _shared = GRADER_TYPES.get(_computed_by)
    _own = GraderType(
        _name, _shared.factory, reads=_shared.reads, scopes=_shared.scopes, alert=_shared.alert, summary=_summary
    )
    GRADER_TYPES.add(_name, _own)
