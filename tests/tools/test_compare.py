"""Verdicts side by side: `grade --compare` on the project's captures, and `agreement` of a grader with people's
verdicts (accuracy, Cohen's kappa) from a CSV or JSON lines file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from otelgrade.cli import main
from otelgrade.core.trajectory import Trajectory
from otelgrade.tools.compare import Agreement
from otelgrade.tools.offline import read_inputs
from tests.captures import read_folder
from tests.paths import FIXTURES

CAPTURES = FIXTURES / "frameworks"


def budget(most: int) -> dict[str, object]:
    return {"suites": [{"name": "all", "graders": [{"name": "budget", "type": "max_tool_calls", "max": most}]}]}


def write(path: Path, doc: dict[str, object]) -> str:
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_kappa_is_agreement_beyond_chance() -> None:
    counts = Counter({(True, True): 20, (True, False): 5, (False, True): 10, (False, False): 15})
    result = Agreement("judge", counts)
    assert result.accuracy == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.4)  # chance agreement 0.5 at these pass rates
    assert Agreement("judge", Counter({(True, True): 9})).kappa is None  # one verdict for every run: undefined


def test_compare_lists_exactly_the_runs_a_tighter_budget_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = write(tmp_path / "old.yaml", budget(3)), write(tmp_path / "new.yaml", budget(1))
    code = main(["grade", "--compare", old, new, "--format", "json", str(CAPTURES / "openai-agents-multi")])
    (result,) = map(json.loads, capsys.readouterr().out.splitlines())
    runs = [t for t in read_inputs([CAPTURES / "openai-agents-multi"]) if t.parent_span_id is None]
    expected = {(t.trace_id, t.span_id) for t in runs if 1 < len(t.tool_calls) <= 3}
    assert expected and code == 1
    assert {(r["trace_id"], r["span_id"]) for r in result["flips"]["pass->fail"]} == expected
    assert set(result["flips"]) == {"pass->fail"}
    assert result["compared"] == len(runs) and result["agreed"] == len(runs) - len(expected)
    assert result["old_version"] != result["new_version"]


def test_a_grader_compared_with_itself_flips_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "same.yaml", budget(2))
    assert main(["grade", "--compare", config, config, str(CAPTURES / "crewai")]) == 0
    out = capsys.readouterr().out
    assert "agreement 100.0%" in out and "0 verdict(s) flipped" in out


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_agreement_with_people(tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str) -> None:
    runs = [t for t in read_inputs([CAPTURES / "openai-agents-multi"]) if t.parent_span_id is None]
    machine = {t.trace_id: len(t.tool_calls) <= 1 for t in runs}
    people = {trace_id: passed if i % 4 else not passed for i, (trace_id, passed) in enumerate(machine.items())}
    rows = [{"trace_id": t, "grader": "budget", "verdict": "pass" if p else "fail"} for t, p in people.items()]
    human = tmp_path / f"people.{form}"
    if form == "csv":
        human.write_text(
            "trace_id,grader,verdict\n" + "".join(f"{r['trace_id']},budget,{r['verdict']}\n" for r in rows)
        )
    else:
        human.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = write(tmp_path / "otelgrade.yaml", budget(1))
    args = [
        "agreement",
        "--config",
        config,
        "--human",
        str(human),
        "--format",
        "json",
        str(CAPTURES / "openai-agents-multi"),
    ]
    assert main(args) == 0
    (result,) = map(json.loads, capsys.readouterr().out.splitlines())
    agreed = sum(people[t] == machine[t] for t in people)
    assert result["runs"] == len(people)
    assert result["accuracy"] == pytest.approx(agreed / len(people))
    both = Counter((people[t], machine[t]) for t in people)
    assert result["kappa"] == pytest.approx(Agreement("budget", both).kappa)


def test_a_verdict_that_is_neither_pass_nor_fail_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    human = tmp_path / "people.csv"
    human.write_text("trace_id,grader,verdict\nabc,budget,maybe\n")
    config = write(tmp_path / "otelgrade.yaml", budget(1))
    assert main(["agreement", "--config", config, "--human", str(human), str(CAPTURES / "crewai")]) == 2
    assert "people.csv:2: verdict 'maybe' is neither pass nor fail" in capsys.readouterr().err


def test_since_grades_only_recent_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "otelgrade.yaml", budget(1))
    assert main(["grade", "--config", config, "--since", "1h", str(CAPTURES / "crewai")]) == 2  # captured long ago
    assert "no agent runs that ended within the last 3600s" in capsys.readouterr().err
    assert main(["grade", "--config", config, "--since", "36500d", "--format", "json", str(CAPTURES / "crewai")]) == 1
    assert capsys.readouterr().out


def test_a_trace_of_several_runs_is_matched_run_by_run_with_span_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared: list[Trajectory] = []  # judgeable runs of traces holding several, and the captures they are in
    inputs: list[str] = []
    for capture in sorted(p for p in CAPTURES.iterdir() if p.is_dir()):
        requests = [t for t in read_folder(capture) if t.parent_span_id is None]
        per_trace = Counter(t.trace_id for t in requests)
        found = [t for t in requests if per_trace[t.trace_id] > 1 and "tool_calls" not in t.lacks]
        shared, inputs = (shared + found)[:4], inputs + [str(capture)] * bool(found)
        if len(shared) == 4:
            break
    assert len({t.trace_id for t in shared}) < len(shared)  # some trace holds two of these runs
    config = write(tmp_path / "otelgrade.yaml", budget(1))
    human = tmp_path / "people.csv"
    rows = "".join(f"{t.trace_id},budget,{'pass' if len(t.tool_calls) <= 1 else 'fail'}\n" for t in shared)
    human.write_text("trace_id,grader,verdict\n" + rows)
    assert main(["agreement", "--config", config, "--human", str(human), "--format", "json", *inputs]) == 0
    (without_span,) = map(json.loads, capsys.readouterr().out.splitlines())
    assert without_span["runs"] == 0 and without_span["not_judged"] == {"several runs in the trace: give span_id": 4}
    rows = "".join(f"{t.trace_id},{t.span_id},budget,{'pass' if len(t.tool_calls) <= 1 else 'fail'}\n" for t in shared)
    human.write_text("trace_id,span_id,grader,verdict\n" + rows)
    assert main(["agreement", "--config", config, "--human", str(human), "--format", "json", *inputs]) == 0
    (with_span,) = map(json.loads, capsys.readouterr().out.splitlines())
    assert with_span["runs"] == 4 and with_span["accuracy"] == 1.0


def test_agreement_says_which_graders_and_trace_ids_it_does_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [run] = [t for t in read_inputs([CAPTURES / "crewai"]) if t.parent_span_id is None][:1]
    config = write(tmp_path / "otelgrade.yaml", budget(1))
    human = tmp_path / "people.csv"
    human.write_text(f"trace_id,grader,verdict\n{run.trace_id},bugdet,pass\n")  # a typo: before, "0 run(s)", exit 0
    assert main(["agreement", "--config", config, "--human", str(human), str(CAPTURES / "crewai")]) == 2
    assert "names no grader of" in capsys.readouterr().err
    human.write_text(
        f"trace_id,grader,verdict\n{run.trace_id},budget,pass\n{run.trace_id},bugdet,pass\n{'0' * 32},budget,fail\n"
    )
    assert main(["agreement", "--config", config, "--human", str(human), str(CAPTURES / "crewai")]) == 0
    err = capsys.readouterr().err
    assert "names graders" in err and "does not have, left out: bugdet" in err
    assert "1 of the 2 trace id(s) in" in err and "are in no input" in err
