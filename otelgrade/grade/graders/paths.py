"""Files a config names: a relative path starts from the folder of the config file that names it.

One rule for every key that names a file read while graders are built (a judge's `prompt_path`, a letta
grader's `module` or `function: "file.py:name"`), wherever the block sits: a suite's grader, one nested in
`all_of`/`any_of`/`not`/`threshold`/`per_turn`, a reference system's own shape. Reading a config sets its
folder (`config_folder`) while its graders are read; each `GraderSpec` keeps that folder and sets it again
whenever it builds its grader, so the graders built inside another one resolve their paths the same way.
Without a config file (the embedded default, a document parsed from a string) paths start from the
working directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from otelgrade.core.errors import ConfigError

RULE = "a relative path starts from the folder of the config file that names it"
_FOLDER: ContextVar[Path | None] = ContextVar("config_folder", default=None)
_READ: ContextVar[list[Path] | None] = ContextVar("files_read", default=None)


def current_folder() -> Path | None:
    """The folder of the config file being read or built from, or None (the working directory)."""
    return _FOLDER.get()


@contextmanager
def files_read() -> Iterator[list[Path]]:
    """The files `config_file` names inside the block, in order (what a grader's version covers)."""
    read: list[Path] = []
    token = _READ.set(read)
    try:
        yield read
    finally:
        _READ.reset(token)


@contextmanager
def config_folder(folder: Path | None) -> Iterator[None]:
    """Resolve relative paths against `folder` (None: the working directory) inside the block."""
    token = _FOLDER.set(folder)
    try:
        yield
    finally:
        _FOLDER.reset(token)


def config_file(path: str, key: str) -> Path:
    """The absolute path of the file `path` names; `ConfigError` at `key`, with that absolute path and the rule,
    when no file is there."""
    resolved = Path(current_folder() or Path.cwd(), path).absolute()
    if not resolved.is_file():
        raise ConfigError(f"no file at {str(resolved)!r} (from {path!r}: {RULE})", key)
    read = _READ.get()
    if read is not None:
        read.append(resolved)
    return resolved
