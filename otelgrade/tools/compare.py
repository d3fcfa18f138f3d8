"""Verdicts side by side: two configs' grades of the same runs (what a grader's change flips), and a judge's
grades beside people's verdicts on the same runs (accuracy and Cohen's kappa)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from otelgrade.core.errors import InputError
from otelgrade.core.results import Grade

GradeKey = tuple[str, str, str, str | None]  # trace id, run span id, suite/grader, call span id


def _key(grade: Grade) -> GradeKey:
    return grade.trace_id, grade.span_id, f"{grade.suite}/{grade.grader}", grade.call_span_id


@dataclass
class GraderComparison:
    """One grader's verdicts under the old config and the new, on the runs both graded."""

    grader: str  # suite/grader
    old_version: str
    new_version: str
    compared: int = 0  # runs at least one config gave a verdict (pass or fail) on, or whose outcome changed
    agreed: int = 0
    without_verdict: int = 0  # runs both skipped (or both errored on): nothing to agree on
    flips: dict[str, list[dict[str, str | None]]] = field(default_factory=dict)  # "pass->fail": the runs

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agreement": self.agreement}


@dataclass
class Comparison:
    graders: list[GraderComparison]
    only_old: list[str]  # graders the new config no longer has (or renamed)
    only_new: list[str]

    @property
    def flipped(self) -> int:
        return sum(len(runs) for g in self.graders for runs in g.flips.values())


def compare(old: Iterable[Grade], new: Iterable[Grade]) -> Comparison:
    """Each grader's verdicts matched run by run (and call by call), the changed ones listed by direction."""
    before = {_key(g): g for g in old}
    after = {_key(g): g for g in new}
    names_before = {k[2]: g.version for k, g in before.items()}
    names_after = {k[2]: g.version for k, g in after.items()}
    graders = {
        name: GraderComparison(name, names_before[name], names_after[name])
        for name in sorted(set(names_before) & set(names_after))
    }
    for key in sorted(set(before) & set(after), key=lambda k: (k[2], k[0], k[1], k[3] or "")):
        was, now = before[key], after[key]
        entry = graders[key[2]]
        if was.outcome == now.outcome and was.outcome not in ("pass", "fail"):
            entry.without_verdict += 1
            continue
        entry.compared += 1
        if was.outcome == now.outcome:
            entry.agreed += 1
            continue
        run = {"trace_id": key[0], "span_id": key[1], "call_span_id": key[3]}
        entry.flips.setdefault(f"{was.outcome}->{now.outcome}", []).append(run)
    return Comparison(
        list(graders.values()),
        sorted(set(names_before) - set(names_after)),
        sorted(set(names_after) - names_before.keys()),
    )


def describe_comparison(comparison: Comparison) -> str:
    lines = []
    for g in comparison.graders:
        changed = "unchanged" if g.old_version == g.new_version else f"{g.old_version} -> {g.new_version}"
        rate = f"{g.agreement:.1%}" if g.agreement is not None else "-"
        unjudged = f", {g.without_verdict} without a verdict in both" if g.without_verdict else ""
        lines.append(f"{g.grader}  version {changed}  agreement {rate} ({g.agreed}/{g.compared} runs{unjudged})")
        for direction, runs in sorted(g.flips.items()):
            lines.append(f"  {direction}: {len(runs)}")
            for run in runs:
                call = f" call {run['call_span_id']}" if run["call_span_id"] else ""
                lines.append(f"    {run['trace_id']}/{run['span_id']}{call}")
    for name in comparison.only_old:
        lines.append(f"{name}  only in the old config (removed or renamed): not compared")
    for name in comparison.only_new:
        lines.append(f"{name}  only in the new config: not compared")
    lines.append(f"\n{comparison.flipped} verdict(s) flipped")
    return "\n".join(lines)


# --- agreement with people -----------------------------------------------------------------------------------

_VERDICT_KEYS = ("verdict", "outcome", "passed", "label", "human")
_PASS = {"pass", "passed", "true", "yes", "1", "good"}
_FAIL = {"fail", "failed", "false", "no", "0", "bad"}


@dataclass(frozen=True)
class HumanVerdict:
    trace_id: str
    grader: str  # a grader's name, or suite/grader
    passed: bool
    span_id: str | None = None  # the run's root span, for a trace that holds several runs


def read_human_verdicts(path: str | Path) -> list[HumanVerdict]:
    """People's verdicts: CSV with a header, or JSON lines, each naming `trace_id`, `grader` and the verdict
    (`verdict`/`outcome`/`passed`/`label`: pass or fail, true or false), and `span_id` where a trace holds several
    runs."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{file}: cannot read: {exc.strerror or exc}") from exc
    if text.lstrip().startswith("{"):
        rows: list[tuple[int, dict[str, Any]]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{file}:{number}: invalid JSON: {exc.msg}") from None
    else:
        rows = [(number, row) for number, row in enumerate(csv.DictReader(io.StringIO(text)), 2)]
    verdicts = [_verdict(file, number, row) for number, row in rows]
    if not verdicts:
        raise InputError(f"{file}: no verdicts (expected a CSV header `trace_id,grader,verdict` and rows)")
    return verdicts


def _verdict(file: Path, number: int, row: Any) -> HumanVerdict:
    where = f"{file}:{number}"
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected an object with trace_id, grader and verdict")
    trace_id, grader = str(row.get("trace_id") or "").strip().lower(), str(row.get("grader") or "").strip()
    raw = next((row[k] for k in _VERDICT_KEYS if row.get(k) not in (None, "")), None)
    if not trace_id or not grader or raw is None:
        raise InputError(f"{where}: each verdict needs trace_id, grader and verdict (pass or fail)")
    word = str(raw).strip().lower()
    if word not in _PASS | _FAIL:
        raise InputError(f"{where}: verdict {raw!r} is neither pass nor fail")
    span_id = str(row.get("span_id") or "").strip().lower() or None
    return HumanVerdict(trace_id, grader, word in _PASS, span_id)


@dataclass
class Agreement:
    """One grader's verdicts beside people's: `both[(human passed, grader passed)]` counts the runs."""

    grader: str
    both: Counter[tuple[bool, bool]] = field(default_factory=Counter)
    not_judged: Counter[str] = field(default_factory=Counter)  # people judged, the grader did not: why

    @property
    def runs(self) -> int:
        return sum(self.both.values())

    @property
    def accuracy(self) -> float | None:
        agreed = self.both[(True, True)] + self.both[(False, False)]
        return agreed / self.runs if self.runs else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa: agreement beyond what the two raters' pass rates give by chance (None when undefined:
        no runs, or both raters gave one verdict to every run)."""
        n = self.runs
        if not n:
            return None
        human_pass = (self.both[(True, True)] + self.both[(True, False)]) / n
        grader_pass = (self.both[(True, True)] + self.both[(False, True)]) / n
        chance = human_pass * grader_pass + (1 - human_pass) * (1 - grader_pass)
        if chance >= 1.0:
            return None
        return ((self.accuracy or 0.0) - chance) / (1 - chance)

    def to_dict(self) -> dict[str, Any]:
        return {
            "grader": self.grader,
            "runs": self.runs,
            "accuracy": self.accuracy,
            "kappa": self.kappa,
            "human_pass_grader_pass": self.both[(True, True)],
            "human_pass_grader_fail": self.both[(True, False)],
            "human_fail_grader_pass": self.both[(False, True)],
            "human_fail_grader_fail": self.both[(False, False)],
            "not_judged": dict(self.not_judged),
        }


def agreement(humans: Sequence[HumanVerdict], grades: Iterable[Grade]) -> list[Agreement]:
    """Per grader named in the people's file, how its verdicts on the same runs agree with theirs. A run's grade is
    its request run's (run scope); a grade that is `skipped` or `error`, or missing, is counted as not judged."""
    by_run: dict[tuple[str, str], list[Grade]] = {}
    for g in grades:
        if g.scope == "run":
            for name in (g.grader, f"{g.suite}/{g.grader}"):
                by_run.setdefault((g.trace_id, name), []).append(g)
    results: dict[str, Agreement] = {}
    for human in humans:
        entry = results.setdefault(human.grader, Agreement(human.grader))
        found = [g for g in by_run.get((human.trace_id, human.grader), []) if human.span_id in (None, g.span_id)]
        if not found:
            entry.not_judged["no grade"] += 1
        elif len({g.suite for g in found}) > 1:
            entry.not_judged["graded in several suites: name the grader suite/grader"] += 1
        elif len({g.span_id for g in found}) > 1:
            entry.not_judged["several runs in the trace: give span_id"] += 1
        elif found[0].outcome in ("pass", "fail"):
            entry.both[(human.passed, found[0].outcome == "pass")] += 1
        else:
            entry.not_judged[found[0].outcome] += 1
    return list(results.values())


def describe_agreement(results: Sequence[Agreement]) -> str:
    lines = []
    for r in results:
        accuracy = f"{r.accuracy:.1%}" if r.accuracy is not None else "-"
        kappa = f"{r.kappa:.3f}" if r.kappa is not None else "undefined"
        lines.append(f"{r.grader}  {r.runs} run(s)  accuracy {accuracy}  Cohen's kappa {kappa}")
        lines.append(
            f"  people pass: grader pass {r.both[(True, True)]}, fail {r.both[(True, False)]}; "
            f"people fail: grader pass {r.both[(False, True)]}, fail {r.both[(False, False)]}"
        )
        if r.not_judged:
            shown = ", ".join(f"{why} {n}" for why, n in sorted(r.not_judged.items()))
            lines.append(f"  not compared: {shown}")
    return "\n".join(lines)
