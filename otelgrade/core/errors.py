"""Errors that reach the user: each names what is wrong and, where it can, the fix."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError
from rapidfuzz import fuzz, process


class ConfigError(ValueError):
    """A configuration that cannot be used. `path` is the key path, e.g. `suites[0].graders[2].max`."""

    def __init__(self, message: str, path: str = "", file: str | None = None) -> None:
        self.message, self.path, self.file = message, path, file
        super().__init__(str(self))

    def at(self, prefix: str, file: str | None = None) -> ConfigError:
        """The same error located under `prefix` (and in `file`)."""
        path = join_path(prefix, self.path)
        return ConfigError(self.message, path, file or self.file)

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.file, self.path) if p)
        return f"{where}: {self.message}" if where else self.message

    @classmethod
    def from_validation(cls, exc: ValidationError, what: str = "", accepted: Iterable[str] = ()) -> ConfigError:
        """The first problem pydantic found, located by its key path. `what` names the block for unknown keys,
        `accepted` lists the keys it takes."""
        first = exc.errors()[0]
        loc = join_path(*(str(p) if isinstance(p, str) else f"[{p}]" for p in first["loc"]))
        kind = first["type"]
        key = str(first["loc"][-1]) if first["loc"] else ""
        if kind in ("extra_forbidden", "unexpected_keyword_argument"):
            takes = f"; it accepts: {', '.join(accepted)}" if accepted else ""
            return cls(f"unknown key {key!r}{' for ' + what if what else ''}{takes}", loc)
        if kind in ("missing", "missing_argument"):
            return cls(f"{what or 'this block'} needs `{key}`", loc)
        return cls(f"{str(first['msg']).removeprefix('Value error, ')} (got {first.get('input')!r})", loc)


def join_path(*parts: str) -> str:
    """`suites[0]` + `graders[2]` + `max` -> `suites[0].graders[2].max` (list indexes attach without a dot)."""
    out = ""
    for part in parts:
        if not part:
            continue
        out = f"{out}{part}" if not out or part.startswith("[") else f"{out}.{part}"
    return out


def closest(word: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    """The `choices` most like `word` (case ignored), best first: the names a "did you mean" offers."""
    found = process.extract(word, list(choices), scorer=fuzz.ratio, processor=str.lower, limit=limit, score_cutoff=70)
    return [choice for choice, _, _ in found]


class InputError(ValueError):
    """An input file that cannot be read as OTLP or trajectory JSON."""
