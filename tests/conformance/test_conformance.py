"""Every reference-system conformance case: same score and pass/fail, or a config error where the
reference raises one. Case files are read from `cases/` beside this file and, when set, from the
folder named by OTELGRADE_CONFORMANCE_DIR.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import adapters

HERE = Path(__file__).parent / "cases"


def _case_files() -> list[Path]:
    files = sorted(HERE.glob("*.jsonl"))
    extra = os.environ.get("OTELGRADE_CONFORMANCE_DIR")
    if extra:
        files += sorted(Path(extra).glob("*.jsonl"))
    return files


def _cases() -> list[Any]:
    out = []
    for file in _case_files():
        for line in file.read_text().splitlines():
            if line.strip():
                case = json.loads(line)
                out.append(pytest.param(case, id=f"{file.parent.name}/{case['id']}"))
    return out


@pytest.mark.parametrize("case", _cases())
def test_case(case: dict[str, Any]) -> None:
    expected = case["expected"]
    observed = adapters.run_case(case)
    if expected.get("error") == "config_error":
        assert observed.error == "config_error", f"expected a config error, got {observed}"
        return
    assert observed.error is None, f"unexpected error: {observed}"
    if expected.get("passed") is not None:
        assert observed.passed == expected["passed"], observed
    if expected.get("score") is None:
        assert observed.score is None or expected.get("passed") is not None, observed
    else:
        assert observed.score is not None and math.isclose(observed.score, expected["score"], abs_tol=1e-6), observed
    if "extracted" in expected:
        assert observed.extracted == expected["extracted"], observed


@pytest.mark.parametrize("inputs", sorted((HERE.parent / "inputs").glob("*.jsonl")), ids=lambda p: p.stem)
def test_every_input_has_its_computed_case(inputs: Path) -> None:
    """cases/<system>.jsonl is what scripts/conformance/compute_cases.py wrote for inputs/<system>.jsonl: the same
    cases, each with the config and input it was computed from (a new input needs the script run)."""
    fed = [json.loads(line) for line in inputs.read_text().splitlines() if line.strip()]
    computed = {c["id"]: c for c in map(json.loads, (HERE / inputs.name).read_text().splitlines()) if c}
    assert [c["id"] for c in fed] == list(computed), "run python3 scripts/conformance/compute_cases.py"
    for case in fed:
        done = computed[case["id"]]
        assert (done["config"], done["input"]) == (case["config"], case["input"]), case["id"]
        assert done["source"].startswith("ran "), case["id"]
