"""The captures shared across test modules: read once, handed out as the same runs, and a change to them named."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.captures import changed, load_folder, rebuild_folder
from tests.paths import FIXTURES

FOLDER = FIXTURES / "traces" / "openai-agents-openinference" / "handoff"


def test_a_fixture_folder_is_rebuilt_once_and_shared() -> None:
    first, again = rebuild_folder(FOLDER), rebuild_folder(FOLDER)
    assert first and first is not again  # a list of one's own...
    assert all(a is b for a, b in zip(first, again, strict=True))  # ...of the same runs
    assert load_folder(FOLDER)[0][0] is load_folder(FOLDER)[0][0]


def test_a_copy_outside_the_fixtures_is_read_afresh(tmp_path: Path) -> None:
    copy = shutil.copytree(FOLDER, tmp_path / "handoff")
    runs = rebuild_folder(copy)
    assert [r.model_dump() for r in runs] == [r.model_dump() for r in rebuild_folder(FOLDER)]
    assert runs[0] is not rebuild_folder(copy)[0]


def test_a_shared_run_changed_by_a_test_is_named() -> None:
    (run, *_) = rebuild_folder(FOLDER)
    named = f"rebuild {FOLDER}"
    assert named not in changed(FOLDER)
    agent = run.agent_name
    run.agent_name = "someone else"
    try:
        assert named in changed(FOLDER)
    finally:
        run.agent_name = agent
    assert named not in changed(FOLDER)
