"""Result sinks: where grades go besides the metrics (a JSONL file, an OTLP tracing backend, ...).

A sink type is one file in this package: a `SinkSettings` subclass registered with `@sink_type`, whose
`type` literal names it in the config and whose `build` makes the `Sink`. A sink is written to from a
grading thread and never raises into grading; failures are counted in `otelgrade_sink_errors_total{sink}`. A sink
that holds and retries what it could not write says which runs wait (`RetryingSink`): with a spool, a run is marked
graded only once every sink has written its grades. A sink about whole runs (`RunSink`) also gets each graded run
with its grades together, its judges' included (`otelgrade.grade.gathering`).
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import ValidationError

from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.registry import Registry
from otelgrade.core.results import Grade
from otelgrade.core.settings import Strict
from otelgrade.core.spans import AnySpan, LogEvent
from otelgrade.grade.gathering import GradedRun


class Sink(Protocol):
    """One destination for grades. Every method is thread-safe and never raises."""

    def write(self, grades: Sequence[Grade]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class RecallingSink(Sink, Protocol):
    """A sink that can tell which grades it already holds (a file it can read back)."""

    def skip_held(self, trace_ids: Collection[str]) -> int:
        """Before a spool replay grades these traces again: do not write again the grades of theirs this sink
        already holds (written just before a crash, their runs not yet marked graded). How many it holds."""
        ...


@runtime_checkable
class RetryingSink(Sink, Protocol):
    """A sink that keeps the grades it could not write (a full disk) and retries them."""

    def unwritten(self) -> set[str]:
        """The trace ids of runs some of whose grades this sink took but has not written yet."""
        ...


@runtime_checkable
class TraceSink(Sink, Protocol):
    """A sink that also keeps the received spans of the traces it sees graded (the traffic archive)."""

    def keep_trace(
        self, trace_id: str, spans: Sequence[AnySpan], logs: Sequence[LogEvent], waiting: bool = True
    ) -> None:
        """A completed trace just graded (again, with its late spans, on a re-grade); `waiting`: some of its
        verdicts are still to come (a judge's, a conversation's)."""
        ...


@runtime_checkable
class RunSink(Sink, Protocol):
    """A sink that wants each graded run's grades together (one message per failing run), beside `write`."""

    def write_run(self, run: GradedRun) -> None:
        """One run's grades, or the part of them its judges gave after `gather_wait` (`run.part` 2). Never
        blocks on I/O and never raises."""
        ...


class SinkSettings(Strict):
    """One entry of `sinks:`; subclasses add `type: Literal["<name>"]` and their own keys."""

    type: str

    @abstractmethod
    def build(self, metrics: Metrics) -> Sink:
        """The sink these settings describe."""

    def linked(self, pages_url: str) -> SinkSettings:
        """The same settings told where people reach the grades page, for a sink whose messages link to runs."""
        return self

    def resolve_paths(self, base_dir: Path) -> SinkSettings:
        """The same settings with relative file paths made relative to `base_dir` (the config file's folder)."""
        return self


_S = TypeVar("_S", bound=type[SinkSettings])
SINK_TYPES: Registry[type[SinkSettings]] = Registry("sink type")
"""Each sink's settings model by the `type:` it is configured with."""


def sink_type(name: str) -> Callable[[_S], _S]:
    """Register a sink's settings model under the `type:` it is configured with."""

    def register(settings: _S) -> _S:
        SINK_TYPES.add(name, settings)
        return settings

    return register


def sink_types() -> list[str]:
    return SINK_TYPES.names()


def read_sink(raw: Any) -> SinkSettings:
    """One `sinks:` entry validated by its type's settings model; errors name the key and the known types."""
    if not isinstance(raw, Mapping):
        raise ConfigError("a sink must be a mapping such as {type: jsonl, path: grades.jsonl}")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in SINK_TYPES:
        raise SINK_TYPES.unknown(kind)
    model = SINK_TYPES.get(kind)
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfigError.from_validation(exc, f"the {kind} sink", model.model_fields) from None


for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")


__all__ = [
    "SINK_TYPES",
    "RecallingSink",
    "RetryingSink",
    "RunSink",
    "Sink",
    "SinkSettings",
    "TraceSink",
    "read_sink",
    "sink_type",
    "sink_types",
]
