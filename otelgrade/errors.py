"""Errors that reach the user: each names what is wrong and, where it can, the fix."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration that cannot be used. `path` is the key path, e.g. `suites[0].graders[2].max`."""

    def __init__(self, message: str, path: str = "", file: str | None = None) -> None:
        self.message, self.path, self.file = message, path, file
        super().__init__(str(self))

    def at(self, prefix: str, file: str | None = None) -> ConfigError:
        """The same error located under `prefix` (and in `file`)."""
        path = f"{prefix}.{self.path}" if prefix and self.path else prefix or self.path
        return ConfigError(self.message, path, file or self.file)

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.file, self.path) if p)
        return f"{where}: {self.message}" if where else self.message


class InputError(ValueError):
    """An input file that cannot be read as OTLP or trajectory JSON."""
