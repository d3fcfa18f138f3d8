"""The figures of HOLDOUT.md: per capture, runs rebuilt exactly / honestly (every difference is a part the run
`lacks`) / wrongly, extra request runs, and wrong verdicts of `tools_not_called: [delete_account]` and
`max_tool_calls` at the ground truth's count (`skipped` and `error` counted apart). Pending captures are read too.

    .venv-test/bin/python tests/capture/holdout_figures.py SOURCE...     # from the repository's root
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from otelgrade.core.trajectory import Trajectory
from otelgrade.grade.graders import build_grader, grade_safely
from tests.captures import rebuild_folder
from tests.e2e.test_rebuild_captures import differences, find_run
from tests.paths import FIXTURES

FORBIDDEN = "delete_account"  # by its last part: a plugin's prefix (`Routing-delete_account`) is the same tool


def _forbidden(tools: list[str]) -> list[str]:
    return sorted({t for t in tools if t.endswith(FORBIDDEN)} | {FORBIDDEN})


GUARDS = (
    (
        "tools_not_called",
        lambda tools: {"tools": _forbidden(tools)},
        lambda tools: not any(t.endswith(FORBIDDEN) for t in tools),
    ),
    ("max_tool_calls", lambda tools: {"max": len(tools)}, lambda tools: True),
)


def honest(found: list[str], run: Trajectory) -> bool:
    """Every difference concerns a part the run says it lacks."""
    lacking = set(run.lacks)
    return bool(lacking) and all(
        d.startswith("lacks")
        or any(p in d or p.replace("_", " ") in d or (p == "tool_calls" and d.startswith("tools")) for p in lacking)
        for d in found
    )


def figures(source: str) -> dict[str, int]:
    folder = FIXTURES / "frameworks" / source
    ground = folder / "expected.json" if (folder / "expected.json").exists() else folder / "expected.pending.json"
    counts = dict.fromkeys(("exact", "honest", "wrong", "extra", "verdicts", "wrong_verdicts", "skipped"), 0)
    for name, spec in sorted(json.loads(ground.read_text())["scenarios"].items()):
        traces = set(spec.get("trace_ids") or ())
        nested = spec.get("nested_runs_allowed", False)
        pool = [
            t
            for t in rebuild_folder(folder / name)
            if (not traces or t.trace_id in traces) and not (nested and t.parent_span_id is not None)
        ]
        counts["extra"] += max(0, len(pool) - len(spec["runs"]))
        for position, expected in enumerate(spec["runs"]):
            try:
                run = find_run(expected, pool, position)
            except (AssertionError, IndexError):
                counts["wrong"] += 1
                continue
            found = differences(expected, run)
            counts["exact" if not found else "honest" if honest(found, run) else "wrong"] += 1
            counts["verdicts"] += verdicts(expected, run, counts)
    return counts


def verdicts(expected: dict[str, Any], run: Trajectory, counts: dict[str, int]) -> int:
    tools = [t["name"] for t in expected["tool_calls"]]
    for kind, params, passes in GUARDS:
        verdict = grade_safely(build_grader(kind, params(tools)), run)
        outcome = getattr(verdict, "outcome", "error")
        if outcome in ("skipped", "error"):
            counts["skipped"] += 1
        elif (outcome == "pass") != passes(tools):
            counts["wrong_verdicts"] += 1
    return len(GUARDS)


if __name__ == "__main__":
    total: dict[str, int] = {}
    for source in sys.argv[1:]:
        row = figures(source)
        print(f"{source:42s} " + " ".join(f"{k} {v}" for k, v in row.items()))
        total = {k: total.get(k, 0) + v for k, v in row.items()}
    print(f"{'total':42s} " + " ".join(f"{k} {v}" for k, v in total.items()))
