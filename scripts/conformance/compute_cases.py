"""Computes the conformance cases of letta-evals, evaldeck and Potato by running each library.

    python3 scripts/conformance/compute_cases.py              # newest releases, rewrite tests/conformance/cases/
    python3 scripts/conformance/compute_cases.py --check      # only report cases whose verdict would change
    python3 scripts/conformance/compute_cases.py --pin evaldeck==0.1.5

Each system gets a venv of its own under --venvs (default /tmp/otelgrade-conformance), with the release pip
resolves (the newest unless pinned). tests/conformance/inputs/<system>.jsonl holds what a case feeds the library
(config, input, note); the runner beside this file (run_<system>.py) runs it in that venv and records what the
library returned: `expected` is always the library's observed verdict, never written by hand. vally's cases are
not computed here: its packages are not on the npm registry (see tests/conformance/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INPUTS = ROOT / "tests" / "conformance" / "inputs"
CASES = ROOT / "tests" / "conformance" / "cases"
SYSTEMS: dict[str, tuple[str, list[str]]] = {  # case file -> (runner, packages)
    "letta-evals": ("run_letta.py", ["letta-evals"]),
    "evaldeck": ("run_evaldeck.py", ["evaldeck"]),
    "potato": ("run_potato.py", ["potato-annotation", "jsonschema"]),  # Potato imports jsonschema undeclared
}
KEY_ORDER = ("id", "system", "grader", "config", "input", "expected", "source", "note", "observed")


def venv_python(venvs: Path, system: str, packages: list[str], upgrade: bool) -> Path:
    """The venv's Python, created and filled on first use; `upgrade` moves unpinned packages to the newest."""
    folder = venvs / system
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        upgrade = True
    if upgrade:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", *packages], check=True)
    return python


def compute(python: Path, runner: str, inputs: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # Potato prints sets in some messages
    done = subprocess.run(
        [str(python), str(HERE / runner)],
        input=inputs.read_text(),
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=HERE,
    )
    cases = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [{k: case[k] for k in KEY_ORDER if k in case} for case in cases]


def changes(old_file: Path, new: list[dict[str, Any]]) -> list[str]:
    old = {}
    if old_file.exists():
        old = {c["id"]: c for c in map(json.loads, old_file.read_text().splitlines()) if c}
    said = []
    for case in new:
        before = old.get(case["id"])
        if before is None:
            said.append(f"new     {case['id']}: {case['expected']}")
        elif before["expected"] != case["expected"]:
            said.append(f"changed {case['id']}: {before['expected']} -> {case['expected']}")
    return said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/otelgrade-conformance"))
    parser.add_argument("--pin", action="append", default=[], help="a requirement such as evaldeck==0.1.5")
    parser.add_argument("--check", action="store_true", help="report what would change; write nothing")
    parser.add_argument("--no-upgrade", action="store_true", help="use the venvs as they are")
    parser.add_argument("systems", nargs="*", default=list(SYSTEMS))
    args = parser.parse_args()
    changed = False
    for system in args.systems:
        runner, packages = SYSTEMS[system]
        pins = {p.split("=")[0].split("<")[0].split(">")[0]: p for p in args.pin}
        wanted = [pins.get(p, p) for p in packages]
        python = venv_python(args.venvs, system, wanted, upgrade=not args.no_upgrade)
        cases = compute(python, runner, INPUTS / f"{system}.jsonl")
        said = changes(CASES / f"{system}.jsonl", cases)
        changed |= bool(said)
        print(f"{system}: {len(cases)} cases, {cases[0]['source'] if cases else 'none'}; {len(said)} new or changed")
        for line in said:
            print("  " + line)
        if not args.check:
            text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
            (CASES / f"{system}.jsonl").write_text(text)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
