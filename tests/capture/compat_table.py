"""The README's framework compatibility table, generated from the capture folders so it cannot drift.

    python tests/capture/compat_table.py            # rewrite the table in README.md
    python tests/capture/compat_table.py --check    # exit 1 if README.md is out of date

One row per framework and instrumentation: a capture folder `tests/capture/<source>/` and its
`<source>-default` variant (the same setup with content capture left at its default, off) share a row.
Versions come from the folder's pins (`requirements.txt` or `package.json`) of the packages its
`manifest.json` lists under `packages`; scenario and run counts from the committed ground truth.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "frameworks"
README = ROOT / "README.md"
START, END = "<!-- compat-table:start -->", "<!-- compat-table:end -->"
DEFAULT = "-default"
COLUMNS = (
    "Capture",
    "Framework",
    "Instrumentation",
    "Versions tested",
    "Captured",
    "Content by default",
    "Turn content on",
    "Lacks even with content on",
)


class TableError(Exception):
    """A capture folder the table cannot describe; the message names the file and the fix."""


@dataclass(frozen=True)
class Capture:
    """One capture folder: its manifest, the versions it tested and what its ground truth holds."""

    source: str
    manifest: dict[str, Any]
    versions: str
    scenarios: int
    runs: int
    lacks: tuple[str, ...]  # what the runs' traces cannot carry (set on `-default` captures)

    @property
    def is_default(self) -> bool:
        return self.source.endswith(DEFAULT)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(folder: Path) -> dict[str, str]:
    """Exact versions pinned in a folder: `name==version` lines, or a package.json's exact versions."""
    requirements = folder / "requirements.txt"
    if requirements.exists():
        pinned = {}
        for line in requirements.read_text().splitlines():
            match = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*(\S+)\s*(#.*)?", line)
            if match:
                pinned[_normalize(match[1])] = match[3]
        return pinned
    package = folder / "package.json"
    if package.exists():
        data = json.loads(package.read_text())
        deps = {**data.get("devDependencies", {}), **data.get("dependencies", {})}
        return {_normalize(name): version for name, version in deps.items() if re.fullmatch(r"\d[\w.+-]*", version)}
    raise TableError(f"{folder}: no requirements.txt or package.json with the tested versions")


def load(folder: Path, fixtures: Path) -> Capture:
    """Read one capture folder and its committed ground truth."""
    manifest = json.loads((folder / "manifest.json").read_text())
    source = manifest["source"]
    packages = manifest.get("packages")
    if not packages:
        raise TableError(
            f'{folder / "manifest.json"}: no "packages" list; name the framework\'s and the '
            'instrumentation\'s packages, e.g. "packages": ["langgraph", "openinference-instrumentation-langchain"]'
        )
    pinned = pins(folder)
    missing = [name for name in packages if _normalize(name) not in pinned]
    if missing:
        raise TableError(f"{folder}: {', '.join(missing)} listed in manifest.json but not pinned to an exact version")
    versions = ", ".join(f"{name} {pinned[_normalize(name)]}" for name in packages)
    expected = fixtures / source / "expected.json"
    if not expected.exists():
        raise TableError(f"{expected}: no capture yet; run .venv-test/bin/python tests/capture/harness.py {source}")
    scenarios = json.loads(expected.read_text())["scenarios"]
    runs = [run for scenario in scenarios.values() for run in scenario["runs"]]
    lacks = sorted({part for run in runs for part in run.get("lacks", [])})
    return Capture(source, manifest, versions, len(scenarios), len(runs), tuple(lacks))


def row(group: list[Capture]) -> list[str]:
    """The cells of one framework's row; `group` is a capture and its `-default` variant, main first."""
    main = group[0]
    if any(capture.versions != main.versions for capture in group):
        tested = " / ".join(f"{c.source}: {c.versions}" for c in group)
        raise TableError(f"one row, different versions ({tested}); pin the same versions in both folders")
    defaults = [capture for capture in group if capture.is_default]
    content = "on"
    if defaults:
        lacks = sorted({part for capture in defaults for part in capture.lacks})
        content = "off" + (f"; the default trace lacks {', '.join(lacks)}" if lacks else "")
    counts = "; ".join(
        f"{'default settings: ' if c.is_default else ''}{c.scenarios} scenarios, {c.runs} runs" for c in group
    )
    return [
        ", ".join(f"`{capture.source}`" for capture in group),
        main.manifest["framework"],
        main.manifest["instrumentation"],
        main.versions,
        counts,
        content,
        main.manifest["content_capture"],
        ", ".join(main.manifest["lacks_with_content"]) or "nothing",
    ]


def render(captures: Path = HERE, fixtures: Path = FIXTURES) -> str:
    """The Markdown table for every folder under `captures` that has a manifest.json."""
    groups: dict[str, list[Capture]] = {}
    for manifest in sorted(captures.glob("*/manifest.json")):
        capture = load(manifest.parent, fixtures)
        groups.setdefault(capture.source.removesuffix(DEFAULT), []).append(capture)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for name in sorted(groups):
        group = sorted(groups[name], key=lambda capture: capture.is_default)
        lines.append("| " + " | ".join(_escape(cell) for cell in row(group)) + " |")
    return "\n".join(lines) + "\n"


def _escape(cell: str) -> str:
    """A manifest's text as one Markdown table cell (no column breaks, no HTML tags)."""
    return cell.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def update(readme: str, table: str) -> str:
    """The README text with the table between the markers replaced by `table`."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < start:
        raise TableError(f"README.md has no {START} ... {END} markers to write the table between")
    return readme[: start + len(START)] + "\n" + table + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the README's table is out of date")
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--captures", type=Path, default=HERE, help="the capture folders")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="the committed captures")
    args = parser.parse_args(argv)
    try:
        current = args.readme.read_text()
        wanted = update(current, render(args.captures, args.fixtures))
    except TableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if wanted == current:
        return 0
    if args.check:
        print(f"{args.readme}: the compatibility table is out of date; run python tests/capture/compat_table.py")
        return 1
    args.readme.write_text(wanted)
    print(f"{args.readme}: compatibility table updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
