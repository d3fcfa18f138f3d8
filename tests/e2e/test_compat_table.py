"""The README's framework compatibility table is what the capture folders generate, and lists every one."""

import json
import shutil
from pathlib import Path

import pytest

from tests.capture import compat_table


def _table(readme: str) -> str:
    return readme.split(compat_table.START, 1)[1].split(compat_table.END, 1)[0]


def test_readme_table_is_generated_from_the_captures() -> None:
    readme = compat_table.README.read_text()
    assert compat_table.update(readme, compat_table.render()) == readme, (
        "README.md's compatibility table is out of date: run .venv-test/bin/python tests/capture/compat_table.py"
    )


def test_every_capture_folder_has_its_row() -> None:
    table = _table(compat_table.README.read_text())
    manifests = sorted(compat_table.HERE.glob("*/manifest.json"))
    assert manifests
    for manifest in manifests:
        source = json.loads(manifest.read_text())["source"]
        assert f"`{source}`" in table, f"{source} is missing from the README table"


def test_check_fails_on_a_stale_readme_and_a_rewrite_fixes_it(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    text = compat_table.README.read_text()
    stale = text.replace(_table(text), "\n| an old table |\n")
    readme.write_text(stale)

    assert compat_table.main(["--check", "--readme", str(readme)]) == 1
    assert readme.read_text() == stale  # --check writes nothing
    assert compat_table.main(["--readme", str(readme)]) == 0
    assert readme.read_text() == text
    assert compat_table.main(["--check", "--readme", str(readme)]) == 0


def test_a_listed_package_without_a_pin_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "captures" / "agno"
    shutil.copytree(compat_table.HERE / "agno", folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "packages": ["agno", "agno-extras"]}))

    with pytest.raises(compat_table.TableError, match=r"agno-extras listed in manifest\.json but not pinned"):
        compat_table.render(tmp_path / "captures")
