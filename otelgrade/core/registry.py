"""The plugin registry: one kind of plugin (grader types, dialects, sinks, receivers, ...) by name.

Every kind of plugin registers the same way: a file adds its entry under a name when it is imported. A
name given twice to different entries is refused at import with both owners named; a lookup of an unknown
name is a `ConfigError` offering the closest names and listing the known ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from otelgrade.core.errors import ConfigError, closest

T = TypeVar("T")


class DuplicateName(RuntimeError):
    """Two plugins of one kind claim the same name: a packaging mistake, found when the second is imported."""


class UnknownName(ConfigError, LookupError):
    """A configured name that no plugin of its kind registered."""


def _owner(entry: object) -> str:
    """Where an entry was defined (its module), for the duplicate error."""
    module = getattr(entry, "__module__", None)
    if module is None or module == __name__:
        module = getattr(getattr(entry, "factory", None), "__module__", None)
    return str(module or type(entry).__name__)


class Registry(Generic[T]):
    """Plugins of one kind by name, in the order they registered.

    `kind` names one entry in errors ("sink type", "extractor"); `key` is the config key that names one
    (the located path of an unknown-name error). `shown` is the spelling an error offers for a key (the
    plain name of an alias), `same` says when a second registration is the first one again (a module
    imported twice) rather than a rival.
    """

    def __init__(
        self,
        kind: str,
        *,
        key: str = "type",
        known: str | None = None,
        shown: Callable[[str, T], str] | None = None,
        same: Callable[[T, T], bool] | None = None,
    ) -> None:
        self.kind, self.key = kind, key
        self._known = known or f"{kind.split()[-1]}s"
        self._shown = shown
        self._same = same
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T, *aliases: str) -> T:
        """Register `entry` under `name` and its `aliases`; `DuplicateName` (and nothing registered) when another
        entry holds one of them."""
        for key in (name, *aliases):
            held = self._entries.get(key)
            if held is not None and not self._is_same(held, entry):
                raise DuplicateName(
                    f"{self.kind} {key!r} is registered twice: by {_owner(held)} and by {_owner(entry)}; "
                    "give one of them another name"
                )
        for key in (name, *aliases):
            self._entries[key] = entry
        return entry

    def _is_same(self, held: T, entry: T) -> bool:
        return held is entry or held == entry or (self._same is not None and self._same(held, entry))

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator registering what it decorates under `name`."""
        return lambda entry: self.add(name, entry)

    def get(self, name: str) -> T:
        """The entry registered under `name`; `UnknownName` (a `ConfigError` at `key`) when there is none."""
        try:
            return self._entries[name]
        except KeyError:
            raise self.unknown(name) from None

    def unknown(self, name: object) -> UnknownName:
        """The error for a name no entry holds: the closest spellings, then every known one."""
        shown = {key: self._shown(key, entry) if self._shown else key for key, entry in self._entries.items()}
        guesses = list(dict.fromkeys(shown[k] for k in closest(str(name), shown, limit=6)))[:3] if name else []
        hint = f" (did you mean {' or '.join(f'`{g}`' for g in guesses)}?)" if guesses else ""
        known = sorted(set(shown.values()), key=lambda n: ("." in n, n))
        return UnknownName(f"unknown {self.kind} {name!r}{hint}; known {self._known}: {', '.join(known)}", self.key)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """(name, entry) pairs in registration order."""
        return list(self._entries.items())

    def values(self) -> list[T]:
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)
